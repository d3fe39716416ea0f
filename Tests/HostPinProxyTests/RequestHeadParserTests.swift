import HostPin
@testable import HostPinProxy
import Testing

/// The strict request-head parser, one row per rule of RFC 9112 it enforces.
@Suite struct RequestHeadParserTests {
    static let parser = RequestHeadParser()

    static func parse(_ text: String) throws(HeadError) -> RequestHead {
        try parser.parse(Array(text.utf8))
    }

    @Test(arguments: [
        // request line
        ("GET  http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", HeadError.malformedRequestLine),
        ("GET http://a.test/ HTTP/1.1 \r\nHost: a.test\r\n\r\n", .malformedRequestLine),
        ("GET http://a.test/\r\nHost: a.test\r\n\r\n", .malformedRequestLine),
        ("G(T http://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidMethod),
        ("GET http://a.test/ HTTP/2.0\r\nHost: a.test\r\n\r\n", .unsupportedVersion("HTTP/2.0")),
        ("GET http://a.test/ HTTP/3.0\r\nHost: a.test\r\n\r\n", .unsupportedVersion("HTTP/3.0")),
        ("GET http://a.test/ HTTP/0.9\r\nHost: a.test\r\n\r\n", .unsupportedVersion("HTTP/0.9")),
        ("GET http://a.test/ HTTP/1.10\r\nHost: a.test\r\n\r\n", .malformedRequestLine),
        ("GET http://a.test/ http/1.1\r\nHost: a.test\r\n\r\n", .malformedRequestLine),
        // line endings
        ("GET http://a.test/ HTTP/1.1\nHost: a.test\r\n\r\n", .bareLF),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\n\n", .bareLF),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a\rb.test\r\n\r\n", .bareCR),
        // field lines
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A: 1\r\n  folded\r\n\r\n", .obsoleteLineFolding),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A : 1\r\n\r\n", .whitespaceBeforeColon),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A 1\r\n\r\n", .missingColon),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\n: 1\r\n\r\n", .invalidFieldName),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX(A): 1\r\n\r\n", .invalidFieldName),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A: 1\u{0}2\r\n\r\n", .invalidFieldValue(name: "X-A")),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nX-A: 1\u{7F}\r\n\r\n", .invalidFieldValue(name: "X-A")),
        // Host
        ("GET http://a.test/ HTTP/1.1\r\n\r\n", .missingHost),
        ("GET http://a.test/ HTTP/1.1\r\nHost: a.test\r\nhost: b.test\r\n\r\n", .duplicateHost),
        // framing
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", .conflictingContentLength),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5, 6\r\n\r\n", .conflictingContentLength),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
         .repeatedContentLength("5, 5")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5,5\r\n\r\n", .repeatedContentLength("5, 5")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5, 5\r\nContent-Length: 5\r\n\r\n",
         .repeatedContentLength("5, 5, 5")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5, 5, 6\r\n\r\n", .conflictingContentLength),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5,\r\n\r\n", .invalidContentLength("")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: -1\r\n\r\n", .invalidContentLength("-1")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 0x10\r\n\r\n", .invalidContentLength("0x10")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: +5\r\n\r\n", .invalidContentLength("+5")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 1234567890123456789\r\n\r\n",
         .contentLengthTooLarge("1234567890123456789")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 99999999999999999999999\r\n\r\n",
         .contentLengthTooLarge("99999999999999999999999")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 99999999999999999999999x\r\n\r\n",
         .invalidContentLength("99999999999999999999999x")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
         .transferEncodingWithContentLength),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .chunkedNotFinal),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: identity\r\n\r\n", .chunkedNotFinal),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked;param\r\n\r\n",
         .chunkedWithParameter("chunked;param")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: Chunked ; q=1\r\n\r\n",
         .chunkedWithParameter("chunked ; q=1")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked;a, gzip\r\n\r\n", .chunkedNotFinal),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
         .unsupportedTransferCoding("gzip")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
         .chunkedRepeated("chunked, chunked")),
        ("POST http://a.test/ HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: chunked, gzip, chunked\r\n\r\n",
         .chunkedRepeated("chunked, gzip, chunked")),
        ("POST http://a.test/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .transferEncodingInHTTP10),
        // targets
        ("GET http://user@a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
         .invalidTarget("userinfo ('user@') is not allowed (RFC 9110 §4.2.4)")),
        ("GET https://a.test/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
         .invalidTarget("scheme 'https' is not proxied (use http://, or CONNECT for https)")),
        ("GET http://a.test:0/ HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("port '0' is not a number from 1 to 65535")),
        ("GET http://a.test:65536/ HTTP/1.1\r\nHost: a.test\r\n\r\n",
         .invalidTarget("port '65536' is not a number from 1 to 65535")),
        ("GET http://a.test:8x/ HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("port '8x' is not a number from 1 to 65535")),
        ("GET http:///x HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("the host is empty")),
        ("GET http://a.test/#f HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("it has a fragment")),
        ("CONNECT a.test HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("CONNECT needs host:port")),
        ("CONNECT a.test:0 HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("port '0' is not a number from 1 to 65535")),
        ("GET * HTTP/1.1\r\nHost: a.test\r\n\r\n", .invalidTarget("'*' is only for OPTIONS")),
        ("GET a.test:80 HTTP/1.1\r\nHost: a.test\r\n\r\n",
         .invalidTarget("'a.test:80' is neither absolute-form (http://host/path) nor origin-form (/path)")),
    ])
    func rejectsWithTheExactError(head: String, error: HeadError) {
        #expect(throws: error) { try Self.parse(head) }
    }

    @Test func rejectsAHostThatIsNotAHostName() {
        #expect(throws: HeadError.self) { try Self.parse("GET http://a_b..test/ HTTP/1.1\r\nHost: x\r\n\r\n") }
        #expect(throws: HeadError.self) { try Self.parse("GET http://[::1/ HTTP/1.1\r\nHost: x\r\n\r\n") }
    }

    @Test(arguments: [
        (HeadLimits.Probe.requestLine, HeadError.requestLineTooLong(limit: 64), 414),
        (.fieldLine, .fieldLineTooLong(limit: 64), 431),
        (.fieldCount, .tooManyFields(limit: 4), 431),
        (.headSize, .headTooLarge(limit: 200), 431),
    ])
    func enforcesSizeLimits(probe: HeadLimits.Probe, error: HeadError, status: Int) {
        var limits = HeadLimits()
        limits.maximumStartLineBytes = 64
        limits.maximumFieldLineBytes = 64
        limits.maximumFieldCount = 4
        limits.maximumHeadBytes = 200
        let parser = RequestHeadParser(limits: limits)
        #expect(throws: error) { try parser.parse(Array(probe.head.utf8)) }
        #expect(error.status == status)
    }

    @Test func endOfHeadFailsAsSoonAsALimitIsPassedWithoutWaitingForTheEnd() {
        var limits = HeadLimits()
        limits.maximumFieldLineBytes = 16
        let partial = Array("GET http://a.test/ HTTP/1.1\r\nX-Long: 0123456789abcdef".utf8)
        #expect(throws: HeadError.fieldLineTooLong(limit: 16)) { try HeadSyntax.endOfHead(in: partial, limits: limits) }
        #expect(throws: HeadError.bareLF) { try HeadSyntax.endOfHead(in: Array("GET / HTTP/1.1\n".utf8), limits: limits) }
        #expect((try? HeadSyntax.endOfHead(in: Array("GET / HTTP/1.1\r\nHost: a\r\n".utf8), limits: limits)) == .some(nil))
    }

    @Test func parsesAnAbsoluteFormRequest() throws {
        let head = try Self.parse("GET http://WWW.Example.Test:8080/a/b?c=d HTTP/1.1\r\nHost: ignored\r\nX-A:  1 \r\n\r\n")
        #expect(head.method == "GET")
        #expect(head.version == .http11)
        guard case .absoluteForm(let authority, let path) = head.target else {
            Issue.record("not absolute-form: \(head.target)")
            return
        }
        #expect(authority.host.text == "www.example.test")
        #expect(authority.port == 8080)
        #expect(authority.text == "WWW.Example.Test:8080")
        #expect(path == "/a/b?c=d")
        #expect(head.fields.values("x-a") == ["1"])
        #expect(head.framing == BodyFraming.none)
        #expect(head.wantsKeepAlive)
    }

    @Test(arguments: [
        ("GET http://a.test HTTP/1.1\r\nHost: a\r\n\r\n", RequestTarget.Probe.absolute(host: "a.test", port: 80, path: "/")),
        ("GET http://a.test?q HTTP/1.1\r\nHost: a\r\n\r\n", .absolute(host: "a.test", port: 80, path: "/?q")),
        ("GET http://[::1]:81/x HTTP/1.1\r\nHost: a\r\n\r\n", .absolute(host: "::1", port: 81, path: "/x")),
        ("GET http://a.test:/x HTTP/1.1\r\nHost: a\r\n\r\n", .absolute(host: "a.test", port: 80, path: "/x")),
        ("CONNECT a.test:443 HTTP/1.1\r\nHost: a.test:443\r\n\r\n", .authority(host: "a.test", port: 443)),
        ("CONNECT [::1]:8443 HTTP/1.1\r\nHost: a\r\n\r\n", .authority(host: "::1", port: 8443)),
        ("GET /x HTTP/1.1\r\nHost: a\r\n\r\n", .origin("/x")),
        ("OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n", .asterisk),
        ("GET http://a.test/ HTTP/1.0\r\n\r\n", .absolute(host: "a.test", port: 80, path: "/")),
    ])
    func parsesEveryTargetForm(head: String, expected: RequestTarget.Probe) throws {
        #expect(RequestTarget.Probe(try Self.parse(head).target) == expected)
    }

    @Test(arguments: [
        ("Content-Length: 5\r\n", BodyFraming.contentLength(5)),
        ("Content-Length: 0\r\n", .none),
        ("Transfer-Encoding: chunked\r\n", .chunked),
        ("Transfer-Encoding: CHUNKED\r\n", .chunked),
        ("", .none),
    ])
    func readsTheBodyFraming(fields: String, framing: BodyFraming) throws {
        #expect(try Self.parse("POST http://a.test/ HTTP/1.1\r\nHost: a\r\n\(fields)\r\n").framing == framing)
    }

    /// RFC 9110 §2.5: a later minor version of HTTP/1 is processed as HTTP/1.1.
    @Test func http12IsReadAsHTTP11() throws {
        let head = try Self.parse("GET http://a.test/ HTTP/1.2\r\nHost: a\r\n\r\n")
        #expect(head.version == .http11)
        #expect(head.wantsKeepAlive)
    }

    @Test func keepAliveFollowsVersionAndConnection() throws {
        #expect(try !Self.parse("GET http://a.test/ HTTP/1.1\r\nHost: a\r\nConnection: Close\r\n\r\n").wantsKeepAlive)
        #expect(try !Self.parse("GET http://a.test/ HTTP/1.0\r\n\r\n").wantsKeepAlive)
    }
}

extension HeadLimits {
    /// Heads that break one limit each, for limits 64/64/4/200.
    enum Probe: Sendable, CaseIterable {
        case requestLine, fieldLine, fieldCount, headSize

        var head: String {
            switch self {
            case .requestLine: "GET http://a.test/\(String(repeating: "a", count: 64)) HTTP/1.1\r\nHost: a\r\n\r\n"
            case .fieldLine: "GET http://a.test/ HTTP/1.1\r\nHost: a\r\nX: \(String(repeating: "b", count: 64))\r\n\r\n"
            case .fieldCount: "GET http://a.test/ HTTP/1.1\r\nHost: a\r\n" + (1...4).map { "X-\($0): 1\r\n" }.joined() + "\r\n"
            case .headSize: "GET http://a.test/ HTTP/1.1\r\nHost: a\r\n" + (1...3).map { "X-\($0): \(String(repeating: "c", count: 55))\r\n" }.joined() + "\r\n"
            }
        }
    }
}

extension RequestTarget {
    /// A target reduced to comparable text, for table rows.
    enum Probe: Hashable, Sendable {
        case absolute(host: String, port: UInt16, path: String)
        case authority(host: String, port: UInt16)
        case origin(String)
        case asterisk

        init(_ target: RequestTarget) {
            switch target {
            case .absoluteForm(let authority, let path): self = .absolute(host: authority.host.text, port: authority.port, path: path)
            case .authorityForm(let authority): self = .authority(host: authority.host.text, port: authority.port)
            case .originForm(let path): self = .origin(path)
            case .asteriskForm: self = .asterisk
            }
        }
    }
}

/// A keep-alive connection's next request parsed with the authority its previous one parsed
/// (``RequestHeadParser/parse(_:knownAuthority:)``, the keep-alive relay's): the same head, or the same
/// error, as a parse from nothing, whatever the target.
@Suite struct KnownAuthorityParseTests {
    @Test(arguments: [
        "http://a.test:8080/x?y", "http://a.test:8080", "http://a.test:8080?q=1", "http://a.test:8080/", "http://a.test:80800/x",
        "http://a.test:8080@b.test/x", "http://a.test:8080#f", "http://a.test:8080/x#f", "HTTP://a.test:8080/x", "http://a.test:808/x",
        "http://a.test:8080.evil.test/x", "http://a.test/x", "https://a.test:8080/x", "/x", "*",
    ])
    func aKnownAuthorityGivesWhatTheFullParseGives(_ target: String) throws {
        let parser = RequestHeadParser()
        let first = try parser.parse(Array("GET http://a.test:8080/first HTTP/1.1\r\nHost: a.test:8080\r\n\r\n".utf8))
        guard case .absoluteForm(let known, _) = first.target else {
            Issue.record("not absolute-form: \(first.target)")
            return
        }
        let head = Array("GET \(target) HTTP/1.1\r\nHost: a.test:8080\r\n\r\n".utf8)
        let full = Result { () throws(HeadError) -> RequestHead in try parser.parse(head) }
        let shortcut = Result { () throws(HeadError) -> RequestHead in try parser.parse(head, knownAuthority: known) }
        #expect(full.map(\.target) == shortcut.map(\.target))
        #expect(full.map(\.targetText) == shortcut.map(\.targetText))
        #expect((try? full.get()) == (try? shortcut.get()))
    }
}

/// ``HeadSyntax/startLineParts(_:)`` cuts as `split(separator:maxSplits:omittingEmptySubsequences:)`
/// with two splits and empty parts kept, which both head parsers used before.
@Suite struct StartLinePartsTests {
    @Test(arguments: ["", " ", "  ", "   ", "GET / HTTP/1.1", "GET  / HTTP/1.1", "HTTP/1.1 200 OK", "HTTP/1.1 200",
                      "HTTP/1.1 200 ", "HTTP/1.1 404 Not Found Here", "a b c d", "abc", "a ", " a", " a b", "a  b  c"])
    func partsAreSplitsParts(_ line: String) {
        let bytes = Array(line.utf8)[...]
        let expected = bytes.split(separator: HeadSyntax.space, maxSplits: 2, omittingEmptySubsequences: false).map(Array.init)
        let parts = HeadSyntax.startLineParts(bytes)
        #expect([parts.first, parts.second, parts.third].compactMap { $0.map(Array.init) } == expected)
    }
}

/// ``BodyFraming/common(_:absent:)``, the in-place reading of the common message's framing, gives what
/// the general reading gives wherever it answers, and answers the common messages.
@Suite struct CommonFramingTests {
    static let lines: [(String, String)] = [
        ("Content-Length", "0"), ("Content-Length", "5"), ("content-length", "123456789012345678"),
        ("Content-Length", "1234567890123456789"), ("Content-Length", "5, 5"), ("Content-Length", "+5"), ("Content-Length", ""),
        ("Content-Length", "0x5"), ("Content-Length", " 5"), ("Transfer-Encoding", "chunked"), ("transfer-encoding", "gzip"),
        ("Connection", "keep-alive"), ("X-Content-Length", "9"),
    ]

    @Test func theCommonReadingAgreesWithTheGeneralOne() {
        var answered = 0
        for first in [nil] + Self.lines.indices.map(Optional.some) {
            for second in [nil] + Self.lines.indices.map(Optional.some) {
                var fields = HeaderFields()
                for index in [first, second].compactMap({ $0 }) { fields.append(name: Self.lines[index].0, value: Self.lines[index].1) }
                for absent in [BodyFraming.none, .untilClose] {
                    for version in [HTTPVersion.http11, .http10] {
                        let general = Result { () throws(HeadError) in try BodyFraming.general(fields, version: version, absent: absent) }
                        guard let common = BodyFraming.common(fields, absent: absent) else { continue }
                        answered += 1
                        #expect(general == .success(common), "\(fields.fields)")
                    }
                }
            }
        }
        // No field, one length of digits, such a length beside a field that is neither.
        #expect(answered > 40)
        var single = HeaderFields()
        single.append(name: "Content-Length", value: "42")
        #expect(BodyFraming.common(single, absent: .untilClose) == .contentLength(42))
        #expect(BodyFraming.common(HeaderFields(), absent: .untilClose) == .untilClose)
    }
}
