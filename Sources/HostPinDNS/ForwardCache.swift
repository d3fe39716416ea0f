import HostPin
import Synchronization

/// Forwarded replies kept for their TTL: the stub's cache for the types it forwards (MX, TXT, SRV, …),
/// keyed by question (name in any letter case, type, class IN) and the client's CD (``ForwardKey``), each
/// with what DNSSEC validation found for it. A second identical question within
/// the TTL is answered from here without asking an upstream, with every TTL counted down by the whole
/// seconds the reply has been kept (RFC 1035 §7.3's decrementing TTLs).
///
/// How long a reply is kept: ``ReplyLifetime``, at most ``maximumTTL``. Bounded by ``maximumEntries``
/// and ``maximumBytes`` (replies can be 64 KiB over TCP): storing past either first drops expired
/// entries, then the ones closest to expiring, down to seven eighths of the bound, so a burst of new
/// questions pays for the sweep once per many stores. Time is measured on a ``MonotonicClock``.
final class ForwardCache: Sendable {
    /// One kept reply.
    struct Entry: Sendable, Hashable {
        /// The upstream's reply, as the forwarder returned it.
        let reply: [UInt8]
        /// What validation found for it; `nil` when it was not validated.
        var dnssec: DNSSECStatus? = nil
        /// Why it is insecure, when it is (``HostPin/ForwardedAnswer/insecurity``).
        var insecurity: InsecureReason? = nil
        /// Monotonic nanoseconds.
        let storedAt: UInt64
        let expiresAt: UInt64
    }

    /// The pure state: no clock, no lock.
    struct State: Sendable {
        var entries: [ForwardKey: Entry] = [:]
        /// The sum of the entries' reply sizes, in octets.
        var bytes = 0

        /// The entry for `question`, unless it has expired at `now` (then it is dropped).
        mutating func entry(for question: ForwardKey, now: UInt64) -> Entry? {
            guard let entry = entries[question] else { return nil }
            guard now < entry.expiresAt else {
                remove(question)
                return nil
            }
            return entry
        }

        mutating func insert(_ entry: Entry, for question: ForwardKey, now: UInt64, maximumEntries: Int,
                             maximumBytes: Int) {
            remove(question)
            guard maximumEntries > 0, entry.reply.count <= maximumBytes else { return }
            if entries.count >= maximumEntries || bytes + entry.reply.count > maximumBytes {
                // Room for this one and an eighth more.
                makeRoom(now: now, entries: maximumEntries - 1 - maximumEntries / 8,
                         bytes: maximumBytes - maximumBytes / 8 - entry.reply.count)
            }
            entries[question] = entry
            bytes += entry.reply.count
        }

        /// Drops expired entries, then those expiring first, until at most `entries` remain and they
        /// hold at most `bytes` octets.
        private mutating func makeRoom(now: UInt64, entries limit: Int, bytes byteLimit: Int) {
            for (question, entry) in entries where entry.expiresAt <= now { remove(question) }
            guard entries.count > limit || bytes > byteLimit else { return }
            for (question, _) in entries.sorted(by: { $0.value.expiresAt < $1.value.expiresAt }) {
                guard entries.count > limit || bytes > byteLimit else { return }
                remove(question)
            }
        }

        mutating func remove(_ question: ForwardKey) {
            if let removed = entries.removeValue(forKey: question) { bytes -= removed.reply.count }
        }
    }

    /// The most replies kept. Default: 4096.
    let maximumEntries: Int
    /// The most octets of replies kept. Default: 4 MiB.
    let maximumBytes: Int
    /// The longest a reply is kept, in seconds, whatever its TTL.
    let maximumTTL: UInt32
    private let clock: any MonotonicClock
    private let state = Mutex(State())

    init(maximumTTL: UInt32, maximumEntries: Int = 4096, maximumBytes: Int = 4 << 20,
         clock: any MonotonicClock = SystemMonotonicClock()) {
        self.maximumTTL = maximumTTL
        self.maximumEntries = maximumEntries
        self.maximumBytes = maximumBytes
        self.clock = clock
    }

    /// The reply kept for `question` (asked with CD or not), how long it has been kept, in whole
    /// seconds, its DNSSEC status and why it is insecure; `nil` when none is kept or it has expired.
    func reply(for question: ForwardedQuestion, checkingDisabled: Bool = false)
        -> (reply: [UInt8], age: UInt32, dnssec: DNSSECStatus?, insecurity: InsecureReason?)?
    {
        let now = clock.nanoseconds()
        let key = ForwardKey(question: question, checkingDisabled: checkingDisabled)
        guard let entry = state.withLock({ $0.entry(for: key, now: now) }) else { return nil }
        return (entry.reply, UInt32((now - entry.storedAt) / 1_000_000_000), entry.dnssec, entry.insecurity)
    }

    /// Keeps `reply`, the forwarder's answer to `question`, for its lifetime (``ReplyLifetime``), at most
    /// ``maximumTTL`` and a secure answer's ``HostPin/ForwardedAnswer/secureTTL`` (RFC 4035 §5.3.3); a
    /// reply with none (TTL 0, a negative answer without SOA, one ldns cannot read, one for another
    /// question) is not kept, and drops what was kept for the question.
    func store(_ reply: [UInt8], for question: ForwardedQuestion) {
        store(ForwardedAnswer(reply: reply), for: ForwardKey(question: question))
    }

    func store(_ answer: ForwardedAnswer, for key: ForwardKey) {
        let reply = answer.reply
        let lifetime = min(ReplyLifetime.seconds(of: reply, answering: key.question) ?? 0, maximumTTL,
                           answer.secureTTL ?? .max)
        let now = clock.nanoseconds()
        let entry = Entry(reply: reply, dnssec: answer.dnssec, insecurity: answer.insecurity, storedAt: now,
                          expiresAt: now + UInt64(lifetime) * 1_000_000_000)
        state.withLock { state in
            guard lifetime > 0 else { return state.remove(key) }
            state.insert(entry, for: key, now: now, maximumEntries: maximumEntries, maximumBytes: maximumBytes)
        }
    }

    /// Drops the replies kept for questions about `name` (every type; in the form ``ForwardedQuestion/name``
    /// has: lower case, no final dot), or every reply when `name` is `nil`.
    func remove(name: String?) {
        state.withLock { state in
            for key in state.entries.keys where name == nil || key.question.name == name { state.remove(key) }
        }
    }

    /// The replies kept (expired ones included until they are dropped).
    var count: Int { state.withLock { $0.entries.count } }
}
