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
        case .status:
            return statusLines(fields)
        case .upstreams:
            guard case .array(let items)? = fields["upstreams"] else { return [] }
            return items.compactMap { item in
                guard case .object(let upstream) = item, case .string(let server)? = upstream["upstream"],
                      case .string(let status)? = upstream["status"] else { return nil }
                // A route's upstream (split DNS) says which domains it serves.
                let name = if case .string(let route)? = upstream["route"] { "\(server) (route \(route))" } else { server }
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

    /// `hostpin ctl status` without `--json`: the status page's data, a line per fact, then a line per
    /// finding, newest first.
    private static func statusLines(_ fields: [String: JSONValue]) -> [String] {
        func object(_ value: JSONValue?) -> [String: JSONValue] { if case .object(let fields)? = value { fields } else { [:] } }
        func items(_ value: JSONValue?) -> [JSONValue] { if case .array(let items)? = value { items } else { [] } }
        func text(_ value: JSONValue?) -> String { if case .string(let text)? = value { text } else { "?" } }
        func strings(_ value: JSONValue?) -> String { items(value).map { text($0) }.joined(separator: ", ") }
        let health = object(fields["health"])
        let answers = object(fields["answers"])
        let now = items(answers["points"]).last.map { decimal(object($0)["perSecond"]) } ?? "?"
        let cache = object(fields["cache"])
        let hitRate = if case .number(let rate)? = cache["hitRate"] { "\((rate * 1000).rounded() / 10) %" } else { "none yet" }
        var lines = [
            "health: \(text(health["reason"])); up \(number(fields["uptimeSeconds"])) s; \(number(fields["reloads"])) reloads",
            "answers: \(now)/s in the last slot, \(number(answers["total"])) in all "
                + "(\(text(answers["source"]) == "dns" ? "DNS answers" : "cache lookups"); one point per \(number(answers["slotSeconds"])) s)",
            "cache: \(number(cache["entries"])) entries; hit rate \(hitRate) (\(number(cache["hits"])) hits, "
                + "\(number(cache["negativeHits"])) negative hits, \(number(cache["misses"])) misses)",
        ]
        for upstream in items(fields["upstreams"]).map(object) {
            let route = if case .string(let route)? = upstream["route"] { route } else { "all names" }
            let roundTrip = if case .number? = upstream["meanRoundTripMilliseconds"] { decimal(upstream["meanRoundTripMilliseconds"]) + " ms" } else { "none" }
            lines.append("upstream \(text(upstream["upstream"])) (\(route)): \(text(upstream["detail"])); \(number(upstream["queries"])) queries, "
                         + "\(number(upstream["failures"])) failures, mean round trip \(roundTrip)")
        }
        let dnssec = object(fields["dnssec"])
        let counted = items(dnssec["counted"]).map { text($0) }
        lines.append("dnssec: " + ["secure", "insecure", "indeterminate", "bogus"].map { key in
            counted.contains(key) ? "\(number(dnssec[key])) \(key)" : "\(key) not counted"
        }.joined(separator: ", "))
        if case .object(let dns)? = fields["dns"] { lines.append("dns: \(number(dns["queries"])) queries") }
        if case .object(let proxy)? = fields["proxy"] {
            lines.append("proxy: \(number(proxy["requests"])) requests, \(number(proxy["refusals"])) refused (403)")
        }
        if case .object(let watch)? = fields["watch"] {
            lines.append("watch: \(number(watch["compared"])) compared (\(number(watch["consistent"])) consistent, "
                         + "\(number(watch["hijacked"])) hijacked, \(number(watch["inconclusive"])) inconclusive)")
        }
        if case .object(let findings)? = fields["findings"] {
            lines.append("hijacks found: \(number(findings["total"])) (newest first, the last \(number(findings["limit"])) kept)")
            for finding in items(findings["items"]).map(object) {
                let trusted = if case .array? = finding["trusted"] { strings(finding["trusted"]) } else { text(finding["trusted"]) }
                let reasons = items(finding["reasons"]).map(object).map { "\(text($0["code"])): \(text($0["detail"]))" }
                lines.append("  \(text(finding["foundAt"])) \(text(finding["name"])) (\(text(finding["type"]))): local \(strings(finding["local"])), "
                             + "trusted \(trusted): " + reasons.joined(separator: "; "))
            }
        }
        return lines
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
