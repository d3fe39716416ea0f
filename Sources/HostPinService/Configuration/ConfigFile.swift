import Foundation
import HostPin
import HostPinNet

/// A configuration file (`--config FILE`, `hostpin check-config FILE`; README.md, "Configuration file"),
/// read and validated whole: JSON, one object with the sections of ``ConfigSchema``, the same rules as a
/// rules file under `rules`. Every problem is reported at its key path; unknown keys are problems.
package struct ConfigFile: Sendable {
    /// The largest configuration file read (as for a rules file: it may embed rules).
    package static let fileLimit = Rules.fileLimit

    /// The file's path as given.
    package let path: String
    /// Each key the file gives, by key path, read.
    package let values: [String: ConfigValue]
    /// Each key's JSON as the file gives it, by key path (what `check-config` prints).
    package let json: [String: JSONValue]

    /// Reads and validates the file at `path`. Relative paths in it (`upstreams.caFile`, `cache.file`,
    /// rules' `respond` files) are read from its folder.
    ///
    /// - Throws: ``ConfigError`` with every problem found; nothing of a bad file is used.
    package static func load(_ path: String) throws(ConfigError) -> ConfigFile {
        let data: Data
        do throws(FileProblem) {
            data = try BoundedFile.contents(of: path, limit: fileLimit)
        } catch {
            throw .file(path: path, error)
        }
        guard data.contains(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) else { throw .empty(path: path) }
        let document: JSONValue
        do {
            document = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw .notJSON(path: path, reason: syntaxError(in: data) ?? "\(error)")
        }
        let folder = URL(fileURLWithPath: path).standardizedFileURL.deletingLastPathComponent()
        var reader = ConfigReader(folder: folder)
        var given: [String: JSONValue] = [:]
        if let top = reader.object(document, "", allowed: ConfigSchema.topLevel) {
            for name in ConfigSchema.topLevel {
                guard let value = top[name] else { continue }
                if ConfigSchema.sections.contains(name) {
                    let allowed = ConfigSchema.keys.map(\.path).filter { $0.hasPrefix(name + ".") }.map { String($0.dropFirst(name.count + 1)) }
                    for (key, field) in reader.object(value, name, allowed: allowed) ?? [:] { given["\(name).\(key)"] = field }
                } else {
                    given[name] = value
                }
            }
        }
        var values: [String: ConfigValue] = [:]
        for key in ConfigSchema.keys {
            if let value = given[key.path], let read = key.read(value, key.path, &reader) { values[key.path] = read }
        }
        ConfigChecks.run(on: values, &reader)
        guard reader.problems.isEmpty else { throw .invalid(path: path, problems: reader.problems) }
        return ConfigFile(path: path, values: values, json: given)
    }

    /// The option values the file gives `command` (`serve`, `proxy`, …): those of the keys whose option
    /// it takes.
    package func defaults(for command: String) -> OptionDefaults {
        var defaults = OptionDefaults()
        for key in ConfigSchema.keys where key.commands.contains(command) {
            switch values[key.path] {
            case .values(let texts)?: if let option = key.option { defaults.values[option] = texts }
            case .flag(true)?: if let option = key.option { defaults.flags.insert(option) }
            case .rules(let rules)?: defaults.rules = rules
            case .names(let names)?: defaults.preresolve = names
            case .flag(false)?, nil: break
            }
        }
        return defaults
    }

    /// Every key with the value in force — the file's, else the default — as one JSON object with the
    /// file's sections.
    package var effective: JSONValue {
        var top: [String: JSONValue] = [:]
        for key in ConfigSchema.keys {
            var value = json[key.path] ?? key.defaultValue
            if key.isPath, case .values(let paths)? = values[key.path], let path = paths.first {
                // A list of paths (`resolution.trustAnchors`) stays a list, each as it will be opened.
                value = if case .array = value { .array(paths.map(JSONValue.string)) } else { .string(path) }
            }
            let parts = key.path.split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2 else {
                top[key.path] = value
                continue
            }
            var section: [String: JSONValue] = if case .object(let fields)? = top[parts[0]] { fields } else { [:] }
            section[parts[1]] = value
            top[parts[0]] = .object(section)
        }
        return .object(top)
    }

    /// Foundation's description of the first syntax error, with its position.
    private static func syntaxError(in data: Data) -> String? {
        do {
            _ = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
            return nil
        } catch {
            return (error as NSError).userInfo[NSDebugDescriptionErrorKey] as? String
        }
    }
}
