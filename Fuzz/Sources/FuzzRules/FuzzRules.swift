import Foundation
import FuzzSupport
@testable import HostPin

/// The folder relative `respond` files are read from: a fresh one holding the files the seed rules name.
let folder: URL = {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-fuzz-rules-\(getpid())")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("logo.png").path,
                                   contents: Data([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]))
    _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("page.html").path,
                                   contents: Data("<p>local</p>\n".utf8))
    return folder
}()

/// Requests every loaded rule set decides, over the names the seeds use, with the headers rules look at.
let requests: [PolicyRequest] = [
    "GET http://www.example.test/logo.png", "GET http://www.example.test/style.css",
    "GET http://api.example.test/v1/users?page=2", "POST https://api.example.test:8443/v1/",
    "GET http://cdn.example.test/old/a/b.js", "HEAD http://static.example.test/img/x.png",
    "GET http://ads.example.test/", "DELETE http://intranet.example.test/x#frag",
    "GET http://xn--bcher-kva.example.test/", "GET https://WWW.Example.Test./",
].compactMap { line in
    let parts = line.split(separator: " ")
    return URL(string: String(parts[1])).map {
        PolicyRequest(method: String(parts[0]), url: $0,
                      headers: [("If-None-Match", "*"), ("X-Debug", "1"), ("Authorization", "Basic eDp5")])
    }
} + [PolicyRequest(connectTo: "www.example.test", port: 443), PolicyRequest(connectTo: "api.example.test", port: 8443)]

/// `Rules(json:relativeTo:)` on any bytes: never a crash (every problem is a `RulesError`), and a rule set
/// it loads decides the requests above within what the README promises: no edit of `Host`,
/// `Content-Length` or `Transfer-Encoding`, redirects to http(s) with a 3xx status or none, `HEAD`
/// answered without a body, IP literals and `localhost` passed.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzRules(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard let rules = try? Rules(json: Data(fuzzInput(data, size)), relativeTo: folder) else { return 0 }
    for request in requests {
        check(rules.decide(request), for: request)
    }
    let literal = rules.decide(PolicyRequest(url: URL(string: "http://127.0.0.10:8080/")!))
    property({ if case .pass(.addressLiteral) = literal { true } else { false } }(), "an IP literal is decided \(literal)")
    let localhost = rules.decide(PolicyRequest(connectTo: "api.localhost", port: 443))
    property({ if case .pass(.localhost) = localhost { true } else { false } }(), "localhost is decided \(localhost)")
    return 0
}

func check(_ decision: PolicyDecision, for request: PolicyRequest) {
    switch decision {
    case .send(_, let edits):
        for edit in edits {
            property(!HeaderEdit.protected.contains(edit.name.lowercased()) && HeaderEdit.isFieldName(edit.name),
                     "\(request.method) \(request.target) edits \(edit)")
            if case .set(_, let value) = edit { property(HeaderEdit.isFieldValue(value), "\(edit) sets a bad value") }
            if case .add(_, let value) = edit { property(HeaderEdit.isFieldValue(value), "\(edit) adds a bad value") }
        }
    case .redirect(let redirect):
        let scheme = redirect.target.scheme?.lowercased()
        property((scheme == "http" || scheme == "https") && redirect.target.host?.isEmpty == false,
                 "\(request.target) redirects to \(redirect.target)")
        property(redirect.status.map { [301, 302, 303, 307, 308].contains($0) } ?? true,
                 "\(request.target) redirects with status \(String(describing: redirect.status))")
    case .respond(let response):
        property((100...999).contains(response.status), "\(request.target) is answered \(response.status)")
        if request.method == "HEAD" { property(response.body.isEmpty, "HEAD \(request.target) is answered a body") }
    case .pass, .block:
        break
    }
}
