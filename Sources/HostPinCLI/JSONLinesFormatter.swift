import Foundation
import HostPin

/// Formats outcomes as JSON Lines: one object per line, keys sorted so output is stable and diffable.
///
/// A resolution becomes `{"addresses":[{"address","family","ttl"}],"cnames":[{"alias","target","ttl"}],
/// "dnssec","name","receivedAt","source","ttl","upstream"}`; a failure `{"code","error","name","source"}`.
/// `dnssec` is what validation found (`secure`, `insecure`, `indeterminate`, `bogus` — then a
/// `dnssecReason` key beside it says which RRset, which key, what was wrong), `null` when the answer was
/// not validated (`--dnssec off`, literals, pins, the untrusted side); a failure carries `dnssec` only
/// when validated: a validated NXDOMAIN or NODATA (its denial's status), a bogus answer (`bogus` and the
/// reason). `family`
/// is the number 4 or 6, TTLs are seconds, `upstream` is the upstream as written (`"ip:port"`, `"https://…"`,
/// `"tls://…"`) or `null`, `source` says where the answer came from (`upstream`, `cache`, `stale` — served
/// after its TTL because no upstream answered, its TTLs the stale TTL —, `literal`, `pinned`,
/// `untrusted`) and, for a failure, where the failure did: NXDOMAIN and NODATA from `upstream`,
/// `negativeCache` (RFC 2308 §5), `literal` or `untrusted`; no answer at all from `upstream` (every
/// trusted upstream failed, or the budget ran out) or `untrusted` (the local resolver); `null` when no
/// server was asked (an invalid name, no resolver). In `hostpin lookup`'s lines a cached answer's TTLs
/// are what is left of them (``RemainingTTL``), while `receivedAt` stays the original answer's.
/// `receivedAt` is RFC 3339 in UTC with milliseconds (`2025-01-31T12:00:00.123Z`), so two answers
/// received in the same second still order correctly.
///
/// `hostpin lookup` writes its lines by hand (``appendLine(for:nameText:untrusted:to:)``): keys in that
/// fixed, alphabetical order, strings escaped as `JSONSerialization` escapes them, so the bytes are the
/// same as `JSONSerialization` with `.sortedKeys` and `.withoutEscapingSlashes` would write, at a small
/// part of the cost (no boxing into `[String: Any]`, no key sorting through ICU collation, no dynamic
/// casts). `compare` nests these objects in its own and still goes through ``line(_:)``.
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
            ["name": nameText, "error": untrusted ? error.untrustedDescription : error.description, "code": error.jsonCode,
             "source": error.source(askedOf: untrusted ? .untrusted : .upstream).map { $0.rawValue as Any } ?? NSNull()]
                .merging(dnssecFields(error.dnssecStatus, always: false)) { $1 }
        }
    }

    /// The `dnssec` key (and `dnssecReason` for a bogus status) for `status`: `dnssec: null` when it is
    /// `nil` and `always`, nothing when it is `nil` otherwise.
    static func dnssecFields(_ status: DNSSECStatus?, always: Bool) -> [String: Any] {
        guard let status else { return always ? ["dnssec": NSNull()] : [:] }
        var fields: [String: Any] = ["dnssec": dnssecWord(status)]
        if case .bogus(let reason) = status { fields["dnssecReason"] = reason.description }
        return fields
    }

    /// The `dnssec` value for `status`.
    static func dnssecWord(_ status: DNSSECStatus) -> String {
        switch status {
        case .secure: "secure"
        case .insecure: "insecure"
        case .indeterminate: "indeterminate"
        case .bogus: "bogus"
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
        ].merging(dnssecFields(resolution.dnssec, always: true)) { $1 }
    }

    /// `date` as RFC 3339 in UTC with milliseconds, `2025-01-31T12:00:00.123Z`, the way
    /// `Date.ISO8601FormatStyle(includingFractionalSeconds: true, timeZone: .gmt)` writes it (fraction
    /// truncated, not rounded), computed from the seconds since 1970 by hand.
    static func timestamp(_ date: Date) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(24)
        appendTimestamp(date, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// `object` serialised on one line.
    static func line(_ object: [String: Any]) -> String {
        // The objects hold only strings, integers, arrays, dictionaries and NSNull, which
        // JSONSerialization always accepts: a failure here is a programming error.
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes])
        else { preconditionFailure("JSON object with an unserialisable value: \(object)") }
        return String(decoding: data, as: UTF8.self)
    }

    /// The line for one outcome (as ``line(_:)`` of ``object(for:nameText:untrusted:)`` writes it),
    /// without the newline.
    static func line(for outcome: Result<Resolution, ResolutionError>, nameText: String, untrusted: Bool = false) -> String {
        var bytes: [UInt8] = []
        appendLine(for: outcome, nameText: nameText, untrusted: untrusted, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the line for one outcome, without the newline, to `bytes`: the same object as
    /// ``object(for:nameText:untrusted:)``, keys in alphabetical order.
    static func appendLine(for outcome: Result<Resolution, ResolutionError>, nameText: String, untrusted: Bool = false,
                           to bytes: inout [UInt8]) {
        switch outcome {
        case .success(let resolution):
            appendObject(for: resolution, age: 0, to: &bytes)
        case .failure(let error):
            appendFailure(error, nameText: nameText, untrusted: untrusted,
                          source: error.source(askedOf: untrusted ? .untrusted : .upstream), dnssec: error.dnssecStatus,
                          to: &bytes)
        }
    }

    /// Appends the line for one outcome of a trusted ``HostResolver/resolveDetailed(_:family:)``, without
    /// the newline: addresses as ``appendObject(for:age:to:)``, each TTL less the outcome's age (what is
    /// left of a cached answer's), NXDOMAIN and NODATA as the failure object whose `source` is the
    /// negative answer's own (`upstream`, `negativeCache`, `literal`).
    static func appendLine(for outcome: Result<ResolutionOutcome, ResolutionError>, nameText: String,
                           to bytes: inout [UInt8]) {
        switch outcome {
        case .success(let detailed):
            switch detailed.answer {
            case .addresses(let resolution):
                appendObject(for: resolution, age: detailed.age, to: &bytes)
            case .negative(let negative):
                appendFailure(negative.error, nameText: nameText, untrusted: false, source: negative.source,
                              dnssec: negative.dnssec, to: &bytes)
            }
        case .failure(let error):
            appendFailure(error, nameText: nameText, untrusted: false, source: error.source(askedOf: .upstream),
                          dnssec: error.dnssecStatus, to: &bytes)
        }
    }

    /// Appends the failure object `{"code","error","name","source"}`, keys in alphabetical order, with
    /// `dnssec` (and `dnssecReason`) when `dnssec` is not `nil`.
    private static func appendFailure(_ error: ResolutionError, nameText: String, untrusted: Bool,
                                      source: Resolution.Source?, dnssec: DNSSECStatus?, to bytes: inout [UInt8]) {
        appendASCII(#"{"code":"#, to: &bytes)
        appendString(error.jsonCode, to: &bytes)
        if dnssec != nil { appendDNSSEC(dnssec, to: &bytes) }
        appendASCII(#","error":"#, to: &bytes)
        appendString(untrusted ? error.untrustedDescription : error.description, to: &bytes)
        appendASCII(#","name":"#, to: &bytes)
        appendString(nameText, to: &bytes)
        appendASCII(#","source":"#, to: &bytes)
        if let source {
            appendString(source.rawValue, to: &bytes)
        } else {
            appendASCII("null", to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends the object of ``object(for:)`` for `resolution`, keys in alphabetical order, each TTL less
    /// `age` (whole seconds the answer has been cached; 0 leaves them as received).
    static func appendObject(for resolution: Resolution, age: UInt32, to bytes: inout [UInt8]) {
        appendASCII(#"{"addresses":["#, to: &bytes)
        for (position, record) in resolution.addresses.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            appendASCII(#"{"address":"#, to: &bytes)
            appendString(record.address.description, to: &bytes)
            appendASCII(#","family":"#, to: &bytes)
            appendInteger(Int(record.address.family.rawValue), to: &bytes)
            appendASCII(#","ttl":"#, to: &bytes)
            appendInteger(Int(RemainingTTL.of(record.ttl, age: age)), to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        appendASCII(#"],"cnames":["#, to: &bytes)
        for (position, record) in resolution.cnames.enumerated() {
            if position > 0 { bytes.append(UInt8(ascii: ",")) }
            appendASCII(#"{"alias":"#, to: &bytes)
            appendString(record.alias, to: &bytes)
            appendASCII(#","target":"#, to: &bytes)
            appendString(record.target, to: &bytes)
            appendASCII(#","ttl":"#, to: &bytes)
            appendInteger(Int(RemainingTTL.of(record.ttl, age: age)), to: &bytes)
            bytes.append(UInt8(ascii: "}"))
        }
        bytes.append(UInt8(ascii: "]"))
        appendDNSSEC(resolution.dnssec, to: &bytes)
        appendASCII(#","name":"#, to: &bytes)
        appendString(resolution.name.text, to: &bytes)
        appendASCII(#","receivedAt":""#, to: &bytes)
        appendTimestamp(resolution.receivedAt, to: &bytes)
        appendASCII(#"","source":"#, to: &bytes)
        appendString(resolution.source.rawValue, to: &bytes)
        appendASCII(#","ttl":"#, to: &bytes)
        appendInteger(Int(RemainingTTL.of(resolution.ttl, age: age)), to: &bytes)
        appendASCII(#","upstream":"#, to: &bytes)
        if let upstream = resolution.upstream {
            appendString(upstream.description, to: &bytes)
        } else {
            appendASCII("null", to: &bytes)
        }
        bytes.append(UInt8(ascii: "}"))
    }

    /// Appends `,"dnssec":…` (`null` for `nil`) and, for a bogus status, `,"dnssecReason":"…"`: the
    /// fields of ``dnssecFields(_:always:)``, in alphabetical order.
    private static func appendDNSSEC(_ status: DNSSECStatus?, to bytes: inout [UInt8]) {
        appendASCII(#","dnssec":"#, to: &bytes)
        guard let status else {
            appendASCII("null", to: &bytes)
            return
        }
        appendString(dnssecWord(status), to: &bytes)
        if case .bogus(let reason) = status {
            appendASCII(#","dnssecReason":"#, to: &bytes)
            appendString(reason.description, to: &bytes)
        }
    }

    // MARK: Pieces

    /// Appends `text`, which the caller knows needs no escaping, as it is.
    private static func appendASCII(_ text: StaticString, to bytes: inout [UInt8]) {
        text.withUTF8Buffer { bytes.append(contentsOf: $0) }
    }

    /// Appends `text` as a JSON string (RFC 8259 §7), escaped as `JSONSerialization` escapes it: `"` and
    /// `\` with a backslash, backspace, form feed, line feed, carriage return and tab as `\b \f \n \r \t`,
    /// the other controls below U+0020 as `\u00xx`; everything else, `/` included, as UTF-8.
    static func appendString(_ text: String, to bytes: inout [UInt8]) {
        bytes.append(UInt8(ascii: "\""))
        var text = text
        text.withUTF8 { utf8 in
            var runStart = 0
            for index in utf8.indices {
                let byte = utf8[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<index]))
                runStart = index + 1
                bytes.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"): bytes.append(byte)
                case 0x08: bytes.append(UInt8(ascii: "b"))
                case 0x0C: bytes.append(UInt8(ascii: "f"))
                case 0x0A: bytes.append(UInt8(ascii: "n"))
                case 0x0D: bytes.append(UInt8(ascii: "r"))
                case 0x09: bytes.append(UInt8(ascii: "t"))
                default:
                    appendASCII("u00", to: &bytes)
                    bytes.append(hexDigit(byte >> 4))
                    bytes.append(hexDigit(byte & 0xF))
                }
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...]))
        }
        bytes.append(UInt8(ascii: "\""))
    }

    private static func hexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? UInt8(ascii: "0") + value : UInt8(ascii: "a") + value - 10
    }

    /// Appends `value` in decimal.
    static func appendInteger(_ value: Int, to bytes: inout [UInt8]) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8,
                     UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) =
            (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { digits in
            var count = 0
            repeat {
                digits[count] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            while count > 0 {
                count -= 1
                bytes.append(digits[count])
            }
        }
    }

    /// Appends `date` as `YYYY-MM-DDTHH:MM:SS.mmmZ` (UTC, milliseconds truncated), from the seconds since
    /// 1970 with the days turned into a proleptic Gregorian date by hand (H. Hinnant's
    /// `civil_from_days`): no formatter, no calendar, no time zone lookup.
    static func appendTimestamp(_ date: Date, to bytes: inout [UInt8]) {
        let interval = date.timeIntervalSince1970
        let wholeSeconds = interval.rounded(.down)
        let seconds = Int(wholeSeconds)
        let milliseconds = min(999, max(0, Int(((interval - wholeSeconds) * 1000).rounded(.down))))
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // civil_from_days
        let shifted = days + 719_468
        let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
        let dayOfEra = shifted - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthIndex = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthIndex + 2) / 5 + 1
        let month = monthIndex < 10 ? monthIndex + 3 : monthIndex - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)

        appendPadded(year, width: 4, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(month, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "-"))
        appendPadded(day, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "T"))
        appendPadded(secondOfDay / 3600, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay / 60 % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        appendPadded(secondOfDay % 60, width: 2, to: &bytes)
        bytes.append(UInt8(ascii: "."))
        appendPadded(milliseconds, width: 3, to: &bytes)
        bytes.append(UInt8(ascii: "Z"))
    }

    /// Appends non-negative `value` in decimal with leading zeros to at least `width` digits.
    private static func appendPadded(_ value: Int, width: Int, to bytes: inout [UInt8]) {
        var divisor = 1
        for _ in 1..<width { divisor *= 10 }
        var value = value
        if value >= divisor * 10 {
            appendInteger(value, to: &bytes)
            return
        }
        while divisor > 0 {
            bytes.append(UInt8(ascii: "0") + UInt8(value / divisor))
            value %= divisor
            divisor /= 10
        }
    }
}
