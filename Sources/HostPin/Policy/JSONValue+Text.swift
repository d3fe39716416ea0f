extension JSONValue {
    /// The value as compact JSON text (RFC 8259), keys sorted, that is safe inside HTML as well: `<`, `>`,
    /// `&`, `'`, U+2028 and U+2029 are written as `\u` escapes, so no byte of a name or a reason can
    /// close a `<script>` element or start a tag wherever the text ends up (the status page's
    /// `/status.json`). Whole numbers below 2^53 are written without a fraction; a number that is not
    /// finite (JSON has none) is written as `null`.
    public var htmlSafeText: String {
        var text = ""
        write(into: &text)
        return text
    }

    private func write(into text: inout String) {
        switch self {
        case .null:
            text += "null"
        case .bool(let flag):
            text += flag ? "true" : "false"
        case .number(let number):
            if !number.isFinite {
                text += "null"
            } else if number.rounded() == number, abs(number) < 9_007_199_254_740_992 {
                text += String(Int64(number))
            } else {
                text += "\(number)"
            }
        case .string(let string):
            Self.write(string, into: &text)
        case .array(let items):
            text += "["
            for (index, item) in items.enumerated() {
                if index > 0 { text += "," }
                item.write(into: &text)
            }
            text += "]"
        case .object(let fields):
            text += "{"
            for (index, key) in fields.keys.sorted().enumerated() {
                if index > 0 { text += "," }
                Self.write(key, into: &text)
                text += ":"
                fields[key]!.write(into: &text)
            }
            text += "}"
        }
    }

    private static func write(_ string: String, into text: inout String) {
        text += "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            case "<", ">", "&", "'", "\u{2028}", "\u{2029}":
                text += escaped(scalar)
            default:
                if scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value) {
                    text += escaped(scalar)
                } else {
                    text.unicodeScalars.append(scalar)
                }
            }
        }
        text += "\""
    }

    /// `\u003c`: four hex digits (every scalar escaped here is in the Basic Multilingual Plane).
    private static func escaped(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16)
        return "\\u" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }
}
