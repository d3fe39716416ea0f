import Foundation
import FuzzSupport
import HostPin
@testable import HostPinService

/// The folder the inputs are written to and read from (relative paths in a configuration file are read
/// from its folder): a fresh one, holding a CA file and a pre-resolve list that the seeds name.
let folder: URL = {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hostpin-fuzz-config-\(getpid())")
    try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("ca.crt").path,
                                   contents: Data("-----BEGIN CERTIFICATE-----\nMA==\n-----END CERTIFICATE-----\n".utf8))
    _ = FileManager.default.createFile(atPath: folder.appendingPathComponent("names.txt").path,
                                   contents: Data("www.example.test\n# a comment\ncdn.example.test\n".utf8))
    return folder
}()
let input = folder.appendingPathComponent("hostpin.json").path
let rewritten = folder.appendingPathComponent("rewritten.json").path

/// `ConfigFile.load` (the reader of `--config FILE` and `hostpin check-config FILE`) on any bytes: never a
/// crash or a hang (every problem is a ``ConfigError``, at its key path); and a file it accepts
/// - is accepted again, meaning the same (``ConfigFile/effective``), once its keys are written out again
///   (sorted, numbers as Foundation writes them);
/// - gives every subcommand values its options accept: the schema's checks are the options' checks,
///   so a file that loads is never refused later by an option (the service's groups, parsed here as
///   `serve` and `proxy` parse them).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzConfig(_ data: UnsafePointer<UInt8>?, _ size: Int) -> CInt {
    guard FileManager.default.createFile(atPath: input, contents: Data(fuzzInput(data, size))) else { return 0 }
    let file: ConfigFile
    do throws(ConfigError) {
        file = try ConfigFile.load(input)
    } catch {
        if case .invalid(_, let problems) = error { property(!problems.isEmpty, "a file refused without a problem") }
        property(!error.lines.isEmpty, "a refusal without a line")
        return 0
    }
    // The keys the file gives, written out again (sorted, Foundation's number format): the same meaning.
    var top: [String: JSONValue] = [:]
    for (path, value) in file.json {
        let parts = path.split(separator: ".", maxSplits: 1).map(String.init)
        guard parts.count == 2 else {
            top[path] = value
            continue
        }
        var section: [String: JSONValue] = if case .object(let fields)? = top[parts[0]] { fields } else { [:] }
        section[parts[1]] = value
        top[parts[0]] = .object(section)
    }
    let written = JSONValue.object(top).jsonData()
    guard FileManager.default.createFile(atPath: rewritten, contents: written) else { return 0 }
    do throws(ConfigError) {
        let again = try ConfigFile.load(rewritten)
        property(again.effective == file.effective, "the file written out again reads otherwise: \(again.effective)")
    } catch {
        property(false, "the file written out again is refused: \(error) — \(String(decoding: written, as: UTF8.self))")
    }
    for command in ["serve", "proxy"] {
        var parser = OptionParser([])
        parser.use(file.defaults(for: command))
        do throws(UsageError) {
            let allowRemote = try parser.flag("--allow-remote")
            _ = try TrustedOptions(parsing: &parser)
            _ = try CacheOptions(parsing: &parser, acceptsPreresolve: true)
            _ = try MetricsOptions(parsing: &parser, allowRemote: allowRemote)
            _ = try LogOptions(parsing: &parser)
            _ = try ControlSocketPath.option(&parser)
        } catch {
            property(false, "\(command) refuses what the file gave: \(error)")
        }
    }
    return 0
}
