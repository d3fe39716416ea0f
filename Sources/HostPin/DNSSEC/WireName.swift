import CLDNS

/// A domain name in canonical wire form (RFC 4034 §6.2: labels, ASCII letters in lower case, no
/// compression), the form DNSSEC compares and signs names in.
///
/// The validator keeps names this way rather than as text so that the signer, owner and zone names it
/// compares are the very octets the signatures cover.
public struct WireName: Sendable, Hashable, CustomStringConvertible {
    /// The labels, each without its length octet; the root has none.
    package let labels: [[UInt8]]

    /// The root, `.`.
    package static let root = WireName(labels: [])

    package init(labels: [[UInt8]]) {
        self.labels = labels.map { $0.map { (0x41...0x5A).contains($0) ? $0 | 0x20 : $0 } }
    }

    /// Reads a name in uncompressed wire form from the start of `bytes`.
    ///
    /// - Returns: The name and the number of octets it took, or `nil` when the bytes end inside it, a
    ///   label length is a compression pointer or reserved (RFC 1035 §4.1.4), or it is longer than 255.
    package static func read<Bytes: RandomAccessCollection>(_ bytes: Bytes) -> (name: WireName, length: Int)?
    where Bytes.Element == UInt8, Bytes.Index == Int {
        var labels: [[UInt8]] = []
        var index = bytes.startIndex
        while true {
            guard index < bytes.endIndex else { return nil }
            let length = Int(bytes[index])
            if length == 0 { break }
            guard length < 64, index + length < bytes.endIndex else { return nil }
            labels.append(Array(bytes[(index + 1)...(index + length)]))
            index += length + 1
        }
        let total = index + 1 - bytes.startIndex
        guard total <= 255 else { return nil }
        return (WireName(labels: labels), total)
    }

    /// The name's wire form: each label after its length, then the root's zero octet.
    package var wire: [UInt8] {
        var bytes: [UInt8] = []
        for label in labels {
            bytes.append(UInt8(label.count))
            bytes.append(contentsOf: label)
        }
        bytes.append(0)
        return bytes
    }

    /// The number of labels, as an RRSIG's Labels field counts them (RFC 4034 §3.1.3; the root is 0).
    /// A leading `*` label is counted here; ``labelCountWithoutWildcard`` leaves it out.
    package var labelCount: Int { labels.count }

    /// The count an RRSIG over this owner carries: a leading wildcard label is not counted.
    package var labelCountWithoutWildcard: Int { labels.first == [UInt8(ascii: "*")] ? labels.count - 1 : labels.count }

    /// The name with its first label removed; the root's parent is `nil`.
    package var parent: WireName? { labels.isEmpty ? nil : WireName(canonical: Array(labels.dropFirst())) }

    /// The last `count` labels of the name (`count` at most ``labelCount``).
    package func suffix(labels count: Int) -> WireName { WireName(canonical: Array(labels.suffix(count))) }

    /// Whether this name is `other` or lies below it: `example.test` is an ancestor-or-self of
    /// `www.example.test` and of itself, and `.` of every name.
    package func isAncestorOrSelf(of other: WireName) -> Bool {
        labels.count <= other.labels.count && Array(other.labels.suffix(labels.count)) == labels
    }

    /// Presentation form with the final dot (`www.example.test.`; the root is `.`), as delv and ldns
    /// print names; octets outside letters, digits, `-`, `_` and `*` are written `\DDD` (RFC 1035 §5.1).
    public var description: String {
        if labels.isEmpty { return "." }
        var text = ""
        for label in labels {
            for byte in label {
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                     UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "*"):
                    text.unicodeScalars.append(Unicode.Scalar(byte))
                default:
                    text += "\\" + String(repeating: "0", count: byte < 10 ? 2 : byte < 100 ? 1 : 0) + String(byte)
                }
            }
            text += "."
        }
        return text
    }

    private init(canonical labels: [[UInt8]]) { self.labels = labels }
}

extension WireName {
    /// Parses a name in presentation form with ldns (`www.example.test`, with or without the final dot).
    ///
    /// - Returns: `nil` when ldns does not take it as a name.
    package init?(_ text: String) {
        guard let rdf = ldns_dname_new_frm_str(text) else { return nil }
        defer { ldns_rdf_deep_free(rdf) }
        guard let data = ldns_rdf_data(rdf),
              let (name, _) = WireName.read(Array(UnsafeBufferPointer(start: data, count: ldns_rdf_size(rdf))))
        else { return nil }
        self = name
    }
}
