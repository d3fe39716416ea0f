import HostPin

/// A hand-written argument parser in swift-argument-parser's spirit: a subcommand asks for each flag and
/// option it knows, the parser removes what it finds, and ``finish()`` reports whatever nobody asked for.
///
/// Accepted forms: `--flag`; `--opt value` and `--opt=value`; an option given several times (repeatable
/// options collect every value, single ones keep the last, as swift-argument-parser does); `--` ends
/// options, so every later argument is positional even if it starts with `-`.
///
/// Options the command line does not give take the values of a configuration file, when one is in use
/// (``use(_:)``): each option once, as if written before the command line.
package struct OptionParser: Sendable {
    /// The arguments as given, for parsing them again (a reload reads the configuration file anew).
    package let commandLine: [String]
    /// Arguments before `--` not yet claimed.
    private var arguments: [String]
    /// Arguments after `--`: positional whatever they look like.
    private var afterTerminator: [String]
    /// The configuration file's values not yet claimed.
    private var defaults = OptionDefaults()
    /// The options found on the command line (not in the configuration file) so far.
    package private(set) var given: Set<String> = []

    /// Prepares `arguments` (without the program and subcommand names) for parsing.
    package init(_ arguments: [String]) {
        commandLine = arguments
        if let end = arguments.firstIndex(of: "--") {
            self.arguments = Array(arguments[..<end])
            self.afterTerminator = Array(arguments[(end + 1)...])
        } else {
            self.arguments = arguments
            self.afterTerminator = []
        }
    }

    /// From now on, an option the command line does not give takes its value from `defaults`.
    package mutating func use(_ defaults: OptionDefaults) {
        self.defaults = defaults
    }

    /// The configuration file's rules, once; `nil` without them.
    package mutating func takeDefaultRules() -> Rules? {
        defer { defaults.rules = nil }
        return defaults.rules
    }

    /// The configuration file's pre-resolve names, once; `nil` without them.
    package mutating func takeDefaultPreresolve() -> [HostName]? {
        defer { defaults.preresolve = nil }
        return defaults.preresolve
    }

    /// Whether any of `names` appears before `--` (used for `-h`/`--help`, which wins over everything).
    package func contains(anyOf names: String...) -> Bool {
        arguments.contains { names.contains($0) }
    }

    /// Removes every `name` and reports whether there was one, or the configuration file turns it on.
    ///
    /// - Throws: ``UsageError/flagTakesNoValue(flag:)`` for `name=value`.
    package mutating func flag(_ name: String) throws(UsageError) -> Bool {
        if arguments.contains(where: { $0.hasPrefix(name + "=") }) { throw .flagTakesNoValue(flag: name) }
        let before = arguments.count
        arguments.removeAll { $0 == name }
        let fromFile = defaults.flags.remove(name) != nil
        guard arguments.count != before else { return fromFile }
        given.insert(name)
        return true
    }

    /// Removes every occurrence of option `name` with its value and returns the values, converted by
    /// `convert`, in command-line order; without one, the configuration file's values for it.
    ///
    /// - Throws: ``UsageError/missingValue(option:)`` when `name` is last or followed by another long
    ///   option (`--server --json` is a forgotten value, not a server called `--json`); what `convert` throws.
    package mutating func values<Value>(_ name: String, _ convert: (String) throws(UsageError) -> Value)
        throws(UsageError) -> [Value]
    {
        var values: [Value] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == name {
                let next = index + 1
                guard next < arguments.endIndex, !arguments[next].hasPrefix("--") else {
                    throw .missingValue(option: name)
                }
                values.append(try convert(arguments[next]))
                arguments.removeSubrange(index...next)
            } else if argument.hasPrefix(name + "=") {
                values.append(try convert(String(argument.dropFirst(name.count + 1))))
                arguments.remove(at: index)
            } else {
                index += 1
            }
        }
        let fromFile = defaults.values.removeValue(forKey: name)
        guard values.isEmpty else {
            given.insert(name)
            return values
        }
        return try (fromFile ?? []).map(convert)
    }

    /// Removes every occurrence of option `name`, whose value may be left out, and returns each one's
    /// value or `nil`, in command-line order: `--opt=value`, `--opt value` when the next argument does
    /// not start with `-` (so only for commands without positional arguments), else `--opt` alone.
    /// Without one, the configuration file's: its value, or `[nil]` when it turns the option on alone.
    package mutating func optionalValues(_ name: String) -> [String?] {
        var values: [String?] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if argument == name {
                let next = index + 1
                if next < arguments.endIndex, !arguments[next].hasPrefix("-") {
                    values.append(arguments[next])
                    arguments.removeSubrange(index...next)
                } else {
                    values.append(nil)
                    arguments.remove(at: index)
                }
            } else if argument.hasPrefix(name + "=") {
                values.append(String(argument.dropFirst(name.count + 1)))
                arguments.remove(at: index)
            } else {
                index += 1
            }
        }
        // The configuration file's: its value, or the option alone (`true`).
        let fromFile = defaults.values.removeValue(forKey: name)
        let aloneInFile = defaults.flags.remove(name) != nil
        guard values.isEmpty else {
            given.insert(name)
            return values
        }
        if let fromFile { return fromFile }
        return aloneInFile ? [nil] : []
    }

    /// Whether option or flag `name` appears before `--`, alone or as `name=value`.
    package func mentions(_ name: String) -> Bool {
        arguments.contains { $0 == name || $0.hasPrefix(name + "=") }
    }

    /// Removes every occurrence of any of `names` (spellings of one option, or options whose relative
    /// order matters, such as curl's `-d` and `--data-binary`) with its value, and returns each as the
    /// spelling used and its value, in command-line order. Only long names (`--x`) take the `--x=value`
    /// form; a short one (`-d`) always takes the next argument, as curl's do.
    ///
    /// - Throws: ``UsageError/missingValue(option:)`` as ``values(_:_:)`` does.
    package mutating func values(anyOf names: [String]) throws(UsageError) -> [(name: String, value: String)] {
        var found: [(name: String, value: String)] = []
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let argument = arguments[index]
            if names.contains(argument) {
                let next = index + 1
                guard next < arguments.endIndex, !arguments[next].hasPrefix("--") else {
                    throw .missingValue(option: argument)
                }
                found.append((argument, arguments[next]))
                arguments.removeSubrange(index...next)
            } else if let name = names.first(where: { $0.hasPrefix("--") && argument.hasPrefix($0 + "=") }) {
                found.append((name, String(argument.dropFirst(name.count + 1))))
                arguments.remove(at: index)
            } else {
                index += 1
            }
        }
        return found
    }

    /// Removes every occurrence of any of `names` (spellings of one flag, such as `-i` and `--include`)
    /// and reports whether there was one.
    ///
    /// - Throws: ``UsageError/flagTakesNoValue(flag:)`` for `name=value`.
    package mutating func flag(anyOf names: String...) throws(UsageError) -> Bool {
        var found = false
        for name in names {
            if try flag(name) { found = true }
        }
        return found
    }

    /// A repeatable option whose values are `LosslessStringConvertible`; `expected` completes
    /// "'x' is not …" in the error.
    package mutating func values<Value: LosslessStringConvertible>(_ name: String, as type: Value.Type, expected: String)
        throws(UsageError) -> [Value]
    {
        try values(name) { text throws(UsageError) in
            guard let value = Value(text) else { throw .invalidValue(option: name, reason: "'\(text)' is not \(expected)") }
            return value
        }
    }

    /// A single-valued option: the last value given, or `nil`.
    package mutating func value<Value: LosslessStringConvertible>(_ name: String, as type: Value.Type, expected: String)
        throws(UsageError) -> Value?
    {
        try values(name, as: type, expected: expected).last
    }

    /// Removes and returns the positional arguments: those before `--` that do not start with `-`
    /// (a lone `-` counts as positional), then all after `--`.
    package mutating func positionals() -> [String] {
        let isPositional = { (argument: String) in argument == "-" || !argument.hasPrefix("-") }
        let taken = arguments.filter(isPositional)
        arguments.removeAll(where: isPositional)
        defer { afterTerminator = [] }
        return taken + afterTerminator
    }

    /// Ends parsing: anything left is an error.
    ///
    /// - Throws: ``UsageError/unknownOption(_:)`` for a leftover starting with `-`, else
    ///   ``UsageError/unexpectedArgument(_:)``.
    package func finish() throws(UsageError) {
        if let option = arguments.first(where: { $0.hasPrefix("-") && $0 != "-" }) {
            throw .unknownOption(option.split(separator: "=", maxSplits: 1).first.map(String.init) ?? option)
        }
        if let leftover = arguments.first ?? afterTerminator.first { throw .unexpectedArgument(leftover) }
    }
}
