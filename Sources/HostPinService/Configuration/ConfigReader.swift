import Foundation
import HostPin

/// Reads the values of a configuration file's keys (``ConfigSchema``) out of its JSON, collecting EVERY
/// problem with its key path instead of stopping at the first. Each `read…` returns `nil` when the
/// value has a problem (then recorded).
package struct ConfigReader {
    /// The configuration file's folder: relative paths in it are read from there.
    package let folder: URL
    private(set) var problems: [ConfigProblem] = []

    package init(folder: URL) {
        self.folder = folder
    }

    package mutating func report(_ keyPath: String, _ reason: ConfigProblem.Reason) {
        problems.append(ConfigProblem(keyPath, reason))
    }

    /// The fields of an object, each key not in `allowed` (nor `comment`, allowed everywhere) reported.
    package mutating func object(_ value: JSONValue, _ keyPath: String, allowed: [String]) -> [String: JSONValue]? {
        guard case .object(let fields) = value else {
            report(keyPath.isEmpty ? "(top level)" : keyPath, .wrongType(expected: "an object", found: value.kind))
            return nil
        }
        let keys = allowed + ["comment"]
        for key in fields.keys.sorted() where !keys.contains(key) {
            report(keyPath.isEmpty ? key : "\(keyPath).\(key)", .unknownKey(allowed: keys))
        }
        if let comment = fields["comment"] { _ = string(comment, keyPath.isEmpty ? "comment" : "\(keyPath).comment") }
        return fields.filter { $0.key != "comment" }
    }

    package mutating func string(_ value: JSONValue, _ keyPath: String) -> String? {
        guard case .string(let text) = value else {
            report(keyPath, .wrongType(expected: "a string", found: value.kind))
            return nil
        }
        return text
    }

    package mutating func bool(_ value: JSONValue, _ keyPath: String) -> Bool? {
        guard case .bool(let flag) = value else {
            report(keyPath, .wrongType(expected: "true or false", found: value.kind))
            return nil
        }
        return flag
    }

    /// The elements of an array, at least one when `nonEmpty`.
    package mutating func array(_ value: JSONValue, _ keyPath: String, of what: String, nonEmpty: Bool = true) -> [JSONValue]? {
        guard case .array(let items) = value else {
            report(keyPath, .wrongType(expected: "an array of \(what)", found: value.kind))
            return nil
        }
        if nonEmpty && items.isEmpty {
            report(keyPath, .empty)
            return nil
        }
        return items
    }

    /// Every string of an array; `nil` when any element is not a string.
    package mutating func strings(_ value: JSONValue, _ keyPath: String, of what: String, nonEmpty: Bool = true) -> [String]? {
        guard let items = array(value, keyPath, of: what, nonEmpty: nonEmpty) else { return nil }
        var texts: [String] = []
        var valid = true
        for (index, item) in items.enumerated() {
            if let text = string(item, "\(keyPath)[\(index)]") { texts.append(text) } else { valid = false }
        }
        return valid ? texts : nil
    }

    /// A number in `range`; whole when `whole`. `expected` completes "… is not a number of seconds from 0 to 3600".
    package mutating func number(_ value: JSONValue, _ keyPath: String, in range: ClosedRange<Double>, whole: Bool,
                         expected: String) -> Double? {
        guard case .number(let number) = value else {
            report(keyPath, .wrongType(expected: whole ? "a whole number" : "a number", found: value.kind))
            return nil
        }
        guard number.isFinite, range.contains(number), !whole || number.rounded() == number else {
            report(keyPath, .outOfRange(Self.text(of: number), expected: expected))
            return nil
        }
        return number
    }

    /// `path` as the process will open it: relative paths are read from the configuration file's folder.
    package func absolute(_ path: String) -> String {
        path.hasPrefix("/") ? path : folder.appendingPathComponent(path).standardizedFileURL.path
    }

    /// A number as the options take it: whole numbers without a fraction (`5`, not `5.0`).
    package static func text(of number: Double) -> String {
        number.rounded() == number && abs(number) < 1e15 ? String(Int64(number)) : String(number)
    }
}
