import Foundation
import HostPin

/// Formats outcomes as JSON Lines: one object per line, keys sorted so output is stable and diffable.
///
/// A resolution becomes `{"addresses":[{"address","family","ttl"}],"cnames":[{"alias","target","ttl"}],
/// "name","receivedAt","source","ttl","upstream"}`; a failure `{"code","error","name"}`. `family` is the
/// number 4 or 6, TTLs are seconds, `upstream` is `"ip:port"` or `null`, and `receivedAt` is RFC 3339 in
/// UTC with milliseconds (`2025-01-31T12:00:00.123Z`), so two answers received in the same second still
/// order correctly.
enum JSONLinesFormatter {
    /// The JSON object for one name's outcome; `untrusted` words a failure as the local resolver's.
    static func object(for outcome: Result<Resolution, ResolutionError>, name: HostName, untrusted: Bool = false)
        -> [String: Any]
    {
        object(for: outcome, nameText: name.text, untrusted: untrusted)
    }

    /// The JSON object for one outcome whose name is `nameText` as given (a `--batch` line that is not a
    /// valid name has no ``HostName``).
    static func object(for outcome: Result<Resolution, ResolutionError>, nameText: String, untrusted: Bool = false)
        -> [String: Any]
    {
        switch outcome {
        case .success(let resolution):
            object(for: resolution)
        case .failure(let error):
            ["name": nameText, "error": untrusted ? error.untrustedDescription : error.description, "code": error.jsonCode]
        }
    }

    /// The JSON object for a resolution.
    static func object(for resolution: Resolution) -> [String: Any] {
        [
            "name": resolution.name.text,
            "addresses": resolution.addresses.map { record -> [String: Any] in
                ["address": record.address.description, "family": record.address.family.rawValue,
                 "ttl": Int(record.ttl)]
            },
            "cnames": resolution.cnames.map { record -> [String: Any] in
                ["alias": record.alias, "target": record.target, "ttl": Int(record.ttl)]
            },
            "ttl": Int(resolution.ttl),
            "upstream": resolution.upstream.map { $0.description as Any } ?? NSNull(),
            "source": resolution.source.rawValue,
            "receivedAt": timestamp(resolution.receivedAt),
        ]
    }

    /// `date` as RFC 3339 in UTC with fractional seconds.
    static func timestamp(_ date: Date) -> String {
        Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt).format(date)
    }

    /// `object` serialised on one line.
    static func line(_ object: [String: Any]) -> String {
        // The objects hold only strings, integers, arrays, dictionaries and NSNull, which
        // JSONSerialization always accepts: a failure here is a programming error.
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { preconditionFailure("JSON object with an unserialisable value: \(object)") }
        return String(decoding: data, as: UTF8.self)
    }
}
