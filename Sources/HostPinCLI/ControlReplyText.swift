import HostPin
import HostPinService

/// A control socket reply as `hostpin ctl` prints it without `--json`.
enum ControlReplyText {
    static func lines(for request: ControlRequest, _ fields: [String: JSONValue]) -> [String] {
        switch request {
        case .flush(let name):
            return ["flushed \(name.text)"]
        case .flushAll:
            return ["flushed every answer (\(number(fields["entries"])) entries)"]
        case .stats:
            let cache: [String: JSONValue] = if case .object(let cache)? = fields["cache"] { cache } else { [:] }
            let listeners: [String: JSONValue] = if case .object(let listeners)? = fields["listeners"] { listeners } else { [:] }
            let dns: [String] = if case .array(let items)? = listeners["dns"] {
                items.compactMap { if case .string(let text) = $0 { text } else { nil } }
            } else { [] }
            let proxy = if case .string(let text)? = listeners["proxy"] { text } else { "none" }
            return [
                "cache: \(number(cache["entries"])) entries; \(number(cache["hits"])) hits, \(number(cache["negativeHits"])) negative hits, "
                    + "\(number(cache["misses"])) misses, \(number(cache["staleServed"])) served stale, \(number(cache["refreshes"])) refreshes",
                "listeners: DNS " + (dns.isEmpty ? "none" : dns.joined(separator: ", ")) + "; proxy \(proxy)",
                "upstreams: \(number(fields["upstreams"]))",
                "reloads: \(number(fields["reloads"]))",
                "uptime: \(number(fields["uptimeSeconds"])) s",
            ]
        case .upstreams:
            guard case .array(let items)? = fields["upstreams"] else { return [] }
            return items.compactMap { item in
                guard case .object(let upstream) = item, case .string(let name)? = upstream["upstream"],
                      case .string(let status)? = upstream["status"] else { return nil }
                let failures = number(upstream["failures"])
                return switch status {
                case "held-down": "\(name) held down after \(failures) failure\(failures == "1" ? "" : "s"), "
                    + "\(decimal(upstream["remainingSeconds"])) s left"
                case "probing": "\(name) probing after \(failures) failure\(failures == "1" ? "" : "s")"
                default: "\(name) \(status)"
                }
            }
        }
    }

    /// A whole number as text; `?` when absent.
    private static func number(_ value: JSONValue?) -> String {
        if case .number(let number)? = value { String(Int(number)) } else { "?" }
    }

    /// A number with its fraction, as text; `?` when absent.
    private static func decimal(_ value: JSONValue?) -> String {
        if case .number(let number)? = value { ConfigReader.text(of: number) } else { "?" }
    }
}
