import Foundation
import HostPin

/// One request on the control socket (README.md, "Control socket"): a line of JSON from `hostpin ctl`,
/// answered by one line of JSON.
package enum ControlRequest: Sendable, Equatable {
    /// Drop every answer cached for the name (A, AAAA, both; positive or negative; forwarded replies too).
    case flush(HostName)
    /// Drop every answer cached.
    case flushAll
    /// The cache's counters and the service's.
    case stats
    /// Each trusted upstream's health.
    case upstreams
    /// Everything the status page shows (its `/status.json`), with the listeners and reloads.
    case status

    /// The longest request line read, in octets.
    package static let lineLimit = 4096

    /// The request as its line, without the newline: `{"command":"flush","name":"www.example.test"}`.
    package var line: String {
        let fields: [String: JSONValue] = switch self {
        case .flush(let name): ["command": .string("flush"), "name": .string(name.text)]
        case .flushAll: ["command": .string("flush"), "all": .bool(true)]
        case .stats: ["command": .string("stats")]
        case .upstreams: ["command": .string("upstreams")]
        case .status: ["command": .string("status")]
        }
        return String(decoding: JSONValue.object(fields).jsonData(), as: UTF8.self)
    }

    /// Why a line is no request (sent back as the reply's `error`).
    package enum Problem: Error, Sendable, Equatable, CustomStringConvertible {
        case notAnObject
        case noName
        case badName(String)
        case unknownCommand

        package var description: String {
            switch self {
            case .notAnObject: "the request is not a JSON object"
            case .noName: "flush needs a name, or all: true"
            case .badName(let text): "'\(text)' is not a valid host name"
            case .unknownCommand: "unknown command (the commands are flush, stats, upstreams and status)"
            }
        }
    }

    /// Reads a request line.
    package static func parse(_ line: [UInt8]) -> Result<ControlRequest, Problem> {
        guard case .object(let fields)? = try? JSONDecoder().decode(JSONValue.self, from: Data(line)) else {
            return .failure(.notAnObject)
        }
        switch fields["command"] {
        case .string("flush")?:
            if case .bool(true)? = fields["all"] { return .success(.flushAll) }
            guard case .string(let text)? = fields["name"] else { return .failure(.noName) }
            guard let name = try? HostName.parse(text) else { return .failure(.badName(text)) }
            return .success(.flush(name))
        case .string("stats")?: return .success(.stats)
        case .string("upstreams")?: return .success(.upstreams)
        case .string("status")?: return .success(.status)
        default: return .failure(.unknownCommand)
        }
    }
}
