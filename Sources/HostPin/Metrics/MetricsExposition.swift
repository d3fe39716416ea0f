/// Text in the Prometheus exposition format, version 0.0.4 (one `# HELP` and one `# TYPE` line per
/// metric family, then its samples, one per line: `name{label="value",…} value`), built family by family.
///
/// Label values are escaped as the format requires (backslash, double quote, line feed); help text too
/// (backslash, line feed). Names and label names are HostPin's own constants.
struct MetricsExposition: Sendable {
    /// What a family is, for its `# TYPE` line.
    enum Kind: String, Sendable {
        case counter
        case gauge
        case histogram
    }

    /// The text so far.
    private(set) var text = ""

    /// Starts the family `name`: its help and type lines.
    mutating func family(_ name: String, _ kind: Kind, help: String) {
        text += "# HELP \(name) \(Self.escapedHelp(help))\n# TYPE \(name) \(kind.rawValue)\n"
    }

    /// One sample of a whole-number value.
    mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: UInt64) {
        line(name, labels, String(value))
    }

    /// One sample of an integer value (a gauge that can go down).
    mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Int) {
        line(name, labels, String(value))
    }

    /// One sample of a real value (seconds).
    mutating func sample(_ name: String, labels: [(String, String)] = [], _ value: Double) {
        line(name, labels, Self.format(value))
    }

    /// A histogram's samples: `name_bucket` per upper bound (cumulative, `+Inf` last), `name_sum`,
    /// `name_count`. `counts` holds each bucket's own count, one more than `bounds` (the last is above
    /// every bound); the count is their total, so the `+Inf` bucket and `_count` always agree.
    mutating func histogram(_ name: String, _ labels: [(String, String)], bounds: [Double], counts: [UInt64], sum: Double) {
        var cumulative: UInt64 = 0
        for (index, count) in counts.enumerated() {
            cumulative += count
            let bound = index < bounds.count ? Self.format(bounds[index]) : "+Inf"
            line(name + "_bucket", labels + [("le", bound)], String(cumulative))
        }
        line(name + "_sum", labels, Self.format(sum))
        line(name + "_count", labels, String(cumulative))
    }

    private mutating func line(_ name: String, _ labels: [(String, String)], _ value: String) {
        text += name
        if !labels.isEmpty {
            text += "{" + labels.map { "\($0.0)=\"\(Self.escapedLabelValue($0.1))\"" }.joined(separator: ",") + "}"
        }
        text += " " + value + "\n"
    }

    /// A float as the format reads it (Go's `ParseFloat`): `0.005`, `2.5`, `1e-05`, `+Inf`; a whole
    /// number without `.0` (`1`, `10`), as Prometheus's own client libraries write bucket bounds, so a
    /// query's `le="1"` matches.
    static func format(_ value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Inf" : "+Inf" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return value.description
    }

    /// A label value with backslash, double quote and line feed escaped.
    static func escapedLabelValue(_ value: String) -> String {
        escaped(value, quotes: true)
    }

    /// Help text with backslash and line feed escaped.
    static func escapedHelp(_ help: String) -> String {
        escaped(help, quotes: false)
    }

    private static func escaped(_ text: String, quotes: Bool) -> String {
        guard text.utf8.contains(where: { $0 == 0x5C || $0 == 0x0A || (quotes && $0 == 0x22) }) else { return text }
        // By scalar, not by Character: CR LF is one Character, whose LF must be escaped all the same.
        var escaped = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\".unicodeScalars
            case "\n": escaped += "\\n".unicodeScalars
            case "\"" where quotes: escaped += "\\\"".unicodeScalars
            default: escaped.append(scalar)
            }
        }
        return String(escaped)
    }
}
