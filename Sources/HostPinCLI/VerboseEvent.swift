import Foundation
import HostPin
import HostPinURL

/// `fetch -v`: the interceptor's event for the request as lines in curl `-v`'s habit, each starting with
/// `* `. Pure: the command prints them on standard error.
///
/// ```text
/// * URL: http://dual.example.test/whoami
/// * dual.example.test: ::1, 127.0.0.10 (upstream)
/// *   Trying [::1]:80... (at 1 ms)
/// *   Trying 127.0.0.10:80... (at 252 ms)
/// * Connected to dual.example.test (127.0.0.10) port 80 via libcurl
/// * Response: 200
/// * Done: 200, 34 bytes in 262 ms
/// ```
enum VerboseEvent {
    static func lines(for event: PinnedURLProtocol.Event) -> [String] {
        var lines = ["* URL: \(event.url.absoluteString)"]
        for (index, hop) in event.hops.enumerated() {
            if index > 0 { lines.append("* Redirected to \(hop.url.absoluteString)") }
            lines += Self.lines(for: hop)
        }
        let took = milliseconds(event.duration)
        switch event.outcome {
        case .response(let status):
            lines.append("* Done: \(status), \(event.bytes) bytes in \(took) ms")
        case .failed(let error):
            lines.append("* Failed after \(took) ms: \(error.localizedDescription)")
        }
        return lines
    }

    /// What `-v` says of a request a `pass` rule leaves to the system: the interceptor declines it
    /// (URLSession sends it, resolving the name through the system's resolver), so no event follows.
    static func lines(passedBy rule: RuleReference, url: URL) -> [String] {
        ["* URL: \(url.absoluteString)",
         "* Rules: \(rule)",
         "* \(url.host ?? ""): not pinned, resolved by the system (pass); URLSession sends it as if HostPin were absent"]
    }

    private static func lines(for hop: PinnedURLProtocol.Hop) -> [String] {
        var lines: [String] = []
        if !hop.rules.isEmpty { lines.append("* Rules: " + hop.rules.map(\.description).joined(separator: ", ")) }
        if hop.fetchedURL != hop.url { lines.append("* Fetching \(hop.fetchedURL.absoluteString) instead (transparent redirect)") }
        let port = hop.fetchedURL.port ?? (hop.fetchedURL.scheme?.lowercased() == "https" ? 443 : 80)
        switch (hop.source, hop.transport) {
        case (.pass?, _):
            lines.append("* \(hop.host): resolved by the system (pass)")
        case (let source?, _):
            lines.append("* \(hop.host): \(hop.addresses.map(\.description).joined(separator: ", ")) (\(source.rawValue))")
        case (nil, .localResponse?):
            lines.append("* Answered locally, without the network")
        case (nil, _):
            break
        }
        for attempt in hop.attempts {
            lines.append("*   Trying \(attempt.address.uriHost):\(port)... (at \(milliseconds(attempt.after)) ms)")
        }
        for address in hop.certificateRefused {
            lines.append("* \(address): certificate not valid for \(hop.host), a likely sinkhole: excluded, next address")
        }
        if let address = hop.address, let transport = hop.transport {
            let reused = hop.attempts.isEmpty ? " (kept-alive connection)" : ""
            lines.append("* Connected to \(hop.host) (\(address)) port \(port) via \(transport.rawValue)\(reused)")
        }
        if let status = hop.status { lines.append("* Response: \(status)") }
        return lines
    }

    /// Whole milliseconds, rounded down.
    private static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
