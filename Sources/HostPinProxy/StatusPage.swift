import HostPin

/// The status page `GET /` serves on the metrics listener: one HTML document with its style and script
/// inside (``StatusPage/style``, ``StatusPage/script``), nothing fetched from anywhere but
/// `/status.json` on the same listener (README.md, "Status page").
///
/// The first view is rendered here, from the same ``HostPin/ServiceMetrics/status()`` the JSON serves,
/// so the tables and the chart show with JavaScript off; the script then fetches `/status.json` every
/// 5 seconds and rebuilds them. Every name, address and reason is text: escaped here
/// (``escape(_:)``), set with `textContent` there, never parsed as HTML. The response's
/// `Content-Security-Policy` lets only the page's own script (its nonce) and style run.
enum StatusPage {
    /// The page for `status` (the JSON `/status.json` serves), its script and style carrying `nonce`.
    static func html(_ status: JSONValue, nonce: String) -> String {
        let health = status["health"]
        let healthy = health?["healthy"] == .bool(true)
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>HostPin status</title>
        <style nonce="\(nonce)">\(style)</style>
        </head>
        <body>
        <header>
        <h1>HostPin</h1>
        <p id="health" class="\(healthy ? "ok" : "bad")">\(escape(health?["reason"]?.text ?? "unknown"))</p>
        <p id="updated">as of \(escape(status["generatedAt"]?.text ?? "")), up \(number(status["uptimeSeconds"])) s</p>
        </header>
        <main>
        <section>
        <h2>Answers per second, last hour</h2>
        \(chart(status["answers"]))
        <p id="answers-summary">\(escape(answersSummary(status["answers"])))</p>
        </section>
        <section>
        <h2>Summary</h2>
        <dl id="summary">\(summary(status).map { "<dt>\(escape($0.0))</dt><dd>\(escape($0.1))</dd>" }.joined())</dl>
        </section>
        <section>
        <h2>Trusted upstreams</h2>
        <table id="upstreams"><thead><tr>\(upstreamColumns.map { "<th>\($0)</th>" }.joined())</tr></thead>
        <tbody>\(upstreamRows(status["upstreams"]).map(row).joined())</tbody></table>
        </section>
        <section>
        <h2>Hijacks found by the watch</h2>
        <p id="findings-summary">\(escape(findingsSummary(status)))</p>
        <table id="findings"><thead><tr>\(findingColumns.map { "<th>\($0)</th>" }.joined())</tr></thead>
        <tbody>\(findingRows(status["findings"]).map(row).joined())</tbody></table>
        </section>
        </main>
        <script nonce="\(nonce)">\(script)</script>
        </body>
        </html>

        """
    }

    /// `default-src 'none'`: the page's own script and style (by `nonce`) and `/status.json` on this
    /// origin, nothing else; no frame may embed it, no form or base URL may point elsewhere.
    static func contentSecurityPolicy(nonce: String) -> String {
        "default-src 'none'; script-src 'nonce-\(nonce)'; style-src 'nonce-\(nonce)'; connect-src 'self'; img-src 'self'; "
            + "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    }

    /// 128 random bits in hex: a nonce per response (CSP Level 3 §6.7.4).
    static func makeNonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let hex = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }

    /// `text` with `&`, `<`, `>`, `"` and `'` as character references: safe in element content and in
    /// quoted attribute values (HTML Living Standard §13.1.2.6, §13.2.4).
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&#39;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    static let upstreamColumns = ["Upstream", "Route", "Status", "Queries", "Failures", "Mean RTT"]
    static let findingColumns = ["Found at", "Name", "Type", "Local answer", "Trusted answer", "Reasons"]

    /// The upstream table's cells, as the script builds them too.
    static func upstreamRows(_ upstreams: JSONValue?) -> [[String]] {
        (upstreams?.items ?? []).map { upstream in
            let failures = upstream["failuresByReason"]?.fields ?? [:]
            let reasons = failures.keys.sorted().map { "\($0) \(number(failures[$0]))" }.joined(separator: ", ")
            let roundTrip = upstream["meanRoundTripMilliseconds"].flatMap { value -> String? in
                guard case .number(let milliseconds) = value else { return nil }
                return "\(milliseconds) ms"
            }
            return [upstream["upstream"]?.text ?? "", upstream["route"]?.text ?? "all names",
                    upstream["detail"]?.text ?? "", number(upstream["queries"]),
                    number(upstream["failures"]) + (reasons.isEmpty ? "" : " (\(reasons))"), roundTrip ?? "–"]
        }
    }

    /// The findings table's cells, newest first, as the script builds them too.
    static func findingRows(_ findings: JSONValue?) -> [[String]] {
        (findings?["items"]?.items ?? []).map { finding in
            let trusted: String = switch finding["trusted"] {
            case .array(let items)?: items.compactMap(\.text).joined(separator: ", ")
            case let other?: other.text ?? ""
            case nil: ""
            }
            let reasons = (finding["reasons"]?.items ?? []).map { "\($0["code"]?.text ?? ""): \($0["detail"]?.text ?? "")" }
            return [finding["foundAt"]?.text ?? "", finding["name"]?.text ?? "", finding["type"]?.text ?? "",
                    (finding["local"]?.items ?? []).compactMap(\.text).joined(separator: ", "), trusted,
                    reasons.joined(separator: "\n")]
        }
    }

    /// The summary list: label and value, as the script builds it too.
    static func summary(_ status: JSONValue) -> [(String, String)] {
        var items: [(String, String)] = []
        if let cache = status["cache"] {
            let rate = if case .number(let rate)? = cache["hitRate"] { "\((rate * 1000).rounded() / 10) %" } else { "–" }
            items.append(("Cache hit rate", rate))
            items.append(("Cache entries", number(cache["entries"])))
        }
        if let dnssec = status["dnssec"] {
            let value: (String) -> String = { key in
                if case .number? = dnssec[key] { return number(dnssec[key]) }
                return "not counted"
            }
            items.append(("DNSSEC secure / insecure / bogus", "\(value("secure")) / \(value("insecure")) / \(value("bogus"))"))
        }
        if let dns = status["dns"], dns != .null { items.append(("DNS queries", number(dns["queries"]))) }
        if let proxy = status["proxy"], proxy != .null {
            items.append(("Proxy requests", number(proxy["requests"])))
            items.append(("Proxy refusals (403)", number(proxy["refusals"])))
        }
        if let watch = status["watch"], watch != .null {
            items.append(("Watch: compared / hijacked / inconclusive",
                          "\(number(watch["compared"])) / \(number(watch["hijacked"])) / \(number(watch["inconclusive"]))"))
        }
        return items
    }

    static func answersSummary(_ answers: JSONValue?) -> String {
        let source = answers?["source"]?.text == "dns" ? "DNS answers" : "cache lookups"
        return "\(number(answers?["total"])) \(source) in all; one point per \(number(answers?["slotSeconds"])) s."
    }

    static func findingsSummary(_ status: JSONValue) -> String {
        guard let findings = status["findings"], findings != .null else { return "The service does not watch the local resolver." }
        return "\(number(findings["total"])) found; the newest \(number(findings["limit"])) are kept, newest first."
    }

    /// The chart: an SVG polyline and a circle per point, 720 × 200, the last hour from left (x 20) to
    /// right (x 700), as the script draws it.
    static func chart(_ answers: JSONValue?) -> String {
        let points: [(x: Double, y: Double)] = (answers?["points"]?.items ?? []).compactMap { point in
            guard case .number(let ago)? = point["secondsAgo"], case .number(let rate)? = point["perSecond"] else { return nil }
            return (ago, rate)
        }
        let window = if case .number(let seconds)? = answers?["windowSeconds"], seconds > 0 { seconds } else { 3600.0 }
        let top = max(1, points.map(\.y).max() ?? 1)
        let placed = points.map { (x: format(700 - min($0.x, window) / window * 680), y: format(185 - $0.y / top * 165)) }
        return """
        <svg id="chart" viewBox="0 0 720 200" role="img" aria-label="answers per second"><line class="axis" x1="20" y1="185" x2="700" y2="185"/>\
        <text class="label" x="22" y="14">\(format(top)) /s</text><text class="label" x="20" y="198">1 hour ago</text>\
        <text class="label" x="700" y="198" text-anchor="end">now</text>\
        <polyline class="line" points="\(placed.map { "\($0.x),\($0.y)" }.joined(separator: " "))"/>\
        \(placed.map { "<circle class=\"point\" r=\"2.5\" cx=\"\($0.x)\" cy=\"\($0.y)\"/>" }.joined())</svg>
        """
    }

    private static func row(_ cells: [String]) -> String {
        "<tr>" + cells.map { "<td>\(escape($0))</td>" }.joined() + "</tr>"
    }

    /// A whole number as text; `?` when absent.
    private static func number(_ value: JSONValue?) -> String {
        guard case .number(let number)? = value else { return "?" }
        return number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }

    private static func format(_ value: Double) -> String {
        String((value * 10).rounded() / 10)
    }
}

extension JSONValue {
    /// The field `key` of an object; `nil` for another value or a missing key.
    subscript(key: String) -> JSONValue? {
        if case .object(let fields) = self { fields[key] } else { nil }
    }

    /// The string, or `nil` for another value.
    var text: String? {
        if case .string(let text) = self { text } else { nil }
    }

    /// The items of an array, or `nil` for another value.
    var items: [JSONValue]? {
        if case .array(let items) = self { items } else { nil }
    }

    /// The fields of an object, or `nil` for another value.
    var fields: [String: JSONValue]? {
        if case .object(let fields) = self { fields } else { nil }
    }
}
