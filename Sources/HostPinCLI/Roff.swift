import Foundation

/// Text for roff's man macros (man(7)): what a manual page needs escaped, in one place.
enum Roff {
    /// `text` as one input line: backslashes and hyphens escaped (`\-` is the minus of an option, which a
    /// reader copies as `-`), characters outside ASCII as `\[uXXXX]` (groff reads Latin-1 otherwise),
    /// a comma between two letters or digits followed by `\:` (a place the line may break: lists of addresses are longer
    /// than a terminal line), and a leading `.` or `'` made plain text by `\&`.
    static func text(_ text: String) -> String {
        var escaped = ""
        var (beforePrevious, previous): (Unicode.Scalar, Unicode.Scalar) = (" ", " ")
        for scalar in text.unicodeScalars {
            defer { (beforePrevious, previous) = (previous, scalar) }
            if previous == ",", scalar.properties.isAlphabetic || ("0"..."9").contains(scalar),
               beforePrevious.properties.isAlphabetic || ("0"..."9").contains(beforePrevious) || beforePrevious == ":" {
                escaped += "\\:"
            }
            switch scalar {
            case "\\": escaped += "\\e"
            case "-": escaped += "\\-"
            case _ where scalar.value > 0x7E:
                escaped += "\\[u\(String(scalar.value, radix: 16, uppercase: true).leftPadded(to: 4))]"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        if escaped.hasPrefix(".") || escaped.hasPrefix("'") || escaped.hasPrefix(" ") { escaped = "\\&" + escaped }
        return escaped
    }

    /// `text` in bold (`\fB…\fR`), escaped.
    static func bold(_ text: String) -> String { "\\fB\(Self.text(text).droppingPlainMark)\\fR" }

    /// `text` in italics (`\fI…\fR`), escaped.
    static func italic(_ text: String) -> String { "\\fI\(Self.text(text).droppingPlainMark)\\fR" }

    /// A quoted macro argument (`.SS "hostpin lookup"`): escaped, its double quotes doubled.
    static func argument(_ text: String) -> String {
        "\"" + Self.text(text).droppingPlainMark.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// Lines kept as they are (`.nf`): each escaped, leading spaces kept.
    static func literal(_ lines: [String]) -> [String] {
        [".RS 2", ".nf"] + lines.map { Self.text($0) } + [".fi", ".RE"]
    }
}

private extension String {
    /// Without the `\&` that ``Roff/text(_:)`` puts before a leading `.` (not needed inside a font change).
    var droppingPlainMark: String { hasPrefix("\\&") ? String(dropFirst(2)) : self }

    func leftPadded(to width: Int) -> String { String(repeating: "0", count: max(0, width - count)) + self }
}
