import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin
import HostPinService

/// The request `hostpin fetch` sends, built from curl-style options: the URL, `-X`, `-d`/`--data-binary`
/// and `-H`. Everything is validated and every `@FILE` read while parsing, so a bad command line fails
/// (exit 2) before any query is sent.
struct FetchRequest: Sendable {
    /// The URL to fetch, host in A-label form.
    let url: URL
    /// The method: `-X`, else POST with a body, else GET.
    let method: String
    /// The body from `-d`/`--data-binary`, parts joined with `&` as curl joins them; `nil` for none.
    let body: Data?
    /// Header fields to set, in command-line order; a `nil` value removes the field (curl's `Name:`).
    let headers: [(name: String, value: String?)]

    /// The `-d` spellings: the value is sent as is, `@FILE` without CR and LF, `@-` from standard input.
    static let dataOptions = ["-d", "--data", "--data-ascii"]
    /// The `--data-binary` spelling: `@FILE` byte for byte.
    static let binaryDataOptions = ["--data-binary"]
    /// `--data-raw`: the value as is, `@` included.
    static let rawDataOptions = ["--data-raw"]

    /// The `User-Agent` sent unless `-H` names one (curl sends `curl/VERSION`).
    static var userAgent: String { "hostpin/\(HostPinCommand.version)" }

    /// What `-X`, the data options and `-H` say, taken from the command line before the positional URL
    /// (their values must not be mistaken for it).
    struct Parts: Sendable {
        /// `-X`, validated as a token.
        let method: String?
        /// The data parts joined with `&`; `nil` without a data option.
        let body: Data?
        /// `-H` fields in command-line order.
        let headers: [(name: String, value: String?)]

        init(parsing parser: inout OptionParser) throws(UsageError) {
            let methods = try parser.values(anyOf: ["-X", "--request"])
            let data = try parser.values(anyOf: FetchRequest.dataOptions + FetchRequest.binaryDataOptions
                                            + FetchRequest.rawDataOptions)
            let headerTexts = try parser.values(anyOf: ["-H", "--header"])
            var parts: [Data] = []
            for (option, value) in data { parts.append(try FetchRequest.dataPart(option: option, value: value)) }
            body = parts.isEmpty ? nil : Data(parts.joined(separator: Data("&".utf8)))
            if let (option, text) = methods.last {
                guard !text.isEmpty, text.utf8.allSatisfy(FetchRequest.isTokenCharacter) else {
                    throw .invalidValue(option: option, reason: "'\(text)' is not an HTTP method (a token such as GET or PUT)")
                }
                method = text
            } else {
                method = nil
            }
            var headers: [(name: String, value: String?)] = []
            for (option, text) in headerTexts { headers.append(try FetchRequest.parseHeader(text, option: option)) }
            self.headers = headers
        }
    }

    /// The request for `url` with `parts`: the method defaults to POST with a body, else GET; a body
    /// gets curl's form Content-Type, and every request a `User-Agent`, unless `-H` names them.
    init(url: URL, parts: Parts) {
        self.url = url
        body = parts.body
        method = parts.method ?? (parts.body == nil ? "GET" : "POST")
        var headers = parts.headers
        let named = { (name: String) in headers.contains { $0.name.caseInsensitiveCompare(name) == .orderedSame } }
        if body != nil, !named("Content-Type") {
            headers.insert(("Content-Type", "application/x-www-form-urlencoded"), at: 0)
        }
        if !named("User-Agent") { headers.insert(("User-Agent", Self.userAgent), at: 0) }
        self.headers = headers
    }

    /// The `URLRequest` to send; `timeout` (seconds) is its idle timeout when given.
    func urlRequest(timeout: Double?) -> URLRequest {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body
        request.httpShouldHandleCookies = false
        request.cachePolicy = .reloadIgnoringLocalCacheData
        if let timeout { request.timeoutInterval = timeout }
        var added: Set<String> = []
        for (name, value) in headers {
            let key = name.lowercased()
            if let value, added.contains(key) {
                request.addValue(value, forHTTPHeaderField: name)
            } else {
                request.setValue(value, forHTTPHeaderField: name)
            }
            if value != nil { added.insert(key) } else { added.remove(key) }
        }
        return request
    }

    // MARK: Parsing

    /// Checks `text` as curl would take it: `http://` assumed without a scheme; only `http` and `https`;
    /// a host that is a valid name or IP literal (a Unicode name becomes its A-labels); a port from 1 to
    /// 65535.
    static func parseURL(_ text: String) throws(UsageError) -> URL {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard var components = URLComponents(string: withScheme) else {
            throw .invalidURL(text, reason: "it does not parse as a URL (RFC 3986)")
        }
        let scheme = components.scheme?.lowercased() ?? ""
        guard scheme == "http" || scheme == "https" else {
            throw .invalidURL(text, reason: "the scheme '\(scheme)' is not supported (only http and https)")
        }
        guard let host = components.host, !host.isEmpty else { throw .invalidURL(text, reason: "it has no host") }
        let name = try HostName.commandLineArgument(host)
        if name.literalAddress == nil, !host.allSatisfy(\.isASCII) || components.percentEncodedHost?.contains("%") == true {
            components.percentEncodedHost = name.text
        }
        // `port` is nil for digits that overflow `Int`, while `url` keeps them: judge the text itself.
        if let range = components.rangeOfPort, let string = components.string, !string[range].isEmpty {
            let digits = string[range]
            guard let port = Int(digits), (1...65535).contains(port) else {
                throw .invalidURL(text, reason: "the port \(digits) is not from 1 to 65535")
            }
        }
        if components.path.isEmpty { components.path = "/" }
        guard let url = components.url else { throw .invalidURL(text, reason: "it does not parse as a URL (RFC 3986)") }
        return url
    }

    /// One body part: `-d @FILE` without CR and LF (curl's rule), `--data-binary @FILE` byte for byte,
    /// `@-` standard input, `--data-raw` and anything not starting with `@` as given.
    ///
    /// Files are read to their end without asking their size first, as curl does, so a FIFO
    /// (`@<(echo hi)`), `/dev/null` and `/dev/stdin` on a pipe work. Every read error is a usage error with
    /// the system's reason (never a trap: `readDataToEndOfFile()` traps on a closed or unreadable stdin).
    static func dataPart(option: String, value: String) throws(UsageError) -> Data {
        guard !rawDataOptions.contains(option), value.hasPrefix("@") else { return Data(value.utf8) }
        let path = String(value.dropFirst())
        let contents: Data
        if path.isEmpty {
            throw .invalidValue(option: option, reason: "'@' names no file (the file name after @ is empty; @- reads standard input)")
        } else if path == "-" {
            do {
                contents = try FileHandle.standardInput.readToEnd() ?? Data()
            } catch {
                throw .unreadableStandardInput(reason: FileAccess.reason(error))
            }
        } else {
            do {
                let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
                defer { try? handle.close() }
                contents = try handle.readToEnd() ?? Data()
            } catch {
                throw .unreadableFile(option: option, path: path, reason: FileAccess.reason(error))
            }
        }
        if binaryDataOptions.contains(option) { return contents }
        return Data(contents.filter { $0 != UInt8(ascii: "\r") && $0 != UInt8(ascii: "\n") })
    }

    /// `Name: value` (value without leading blanks), `Name:` to remove the field, `Name;` for an
    /// empty value — curl's three forms.
    static func parseHeader(_ text: String, option: String) throws(UsageError) -> (name: String, value: String?) {
        let invalid = UsageError.invalidValue(option: option, reason: "'\(text)' is not a header line 'Name: value'")
        if text.hasSuffix(";"), !text.contains(":") {
            let name = String(text.dropLast())
            guard isFieldName(name) else { throw invalid }
            return (name, "")
        }
        guard let colon = text.firstIndex(of: ":") else { throw invalid }
        let name = String(text[..<colon])
        guard isFieldName(name) else { throw invalid }
        let value = text[text.index(after: colon)...].drop(while: { $0 == " " || $0 == "\t" })
        // Scalars, not Characters: "\r\n" is one Character, equal to neither "\r" nor "\n".
        if value.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" }) {
            throw .invalidValue(option: option, reason: "the value of '\(name)' contains a line break")
        }
        if let control = value.unicodeScalars.first(where: { ($0.value < 0x20 && $0 != "\t") || $0.value == 0x7F }) {
            throw .invalidValue(option: option,
                                reason: "the value of '\(name)' contains the control character \(Self.codePoint(control))")
        }
        return (name, value.isEmpty ? nil : String(value))
    }

    /// `U+000D`: a scalar as the Unicode standard writes it.
    private static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    private static func isFieldName(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy(isTokenCharacter)
    }

    /// RFC 9110 §5.6.2 `tchar`.
    static func isTokenCharacter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
