import HostPin
import Synchronization

/// The stub's responses to A and AAAA queries answered from the trusted cache, kept as ldns wrote them
/// (``ReplyTemplate``) under the query's ``AnswerKey``: a query asked again skips reading it, planning
/// it and writing its response with ldns, which cost a cache hit most of its CPU time (perf, cpu-clock;
/// Benchmarks/README.md, item 7).
///
/// An entry is used only while the trusted cache returns the same answer it was made from: each hit
/// still looks the name up there (``CachingResolver/cachedOutcome(_:family:)``, so the cache's
/// statistics count it and refresh-ahead starts as for any hit), and takes its age from it. The trusted
/// cache's expiry, removal or refresh of the name thus retires the entry at once; the next query
/// writes a new one; so does a replacement of the rules (``LiveRules/generation``). Bounded by
/// ``maximumEntries``: storing past it empties the table (each entry
/// is rebuilt by the next query for it).
final class AnswerCache: Sendable {
    /// A class, so a hit copies one reference out of the lock rather than each of its fields.
    final class Entry: Sendable {
        let name: HostName
        let family: AddressFamily
        /// What the trusted cache answered when the response was written.
        let answer: ResolutionOutcome.Answer
        let template: ReplyTemplate
        /// The labels the response is counted under.
        let type: DNSQueryMetrics.QueryType
        let outcome: DNSQueryMetrics.Outcome
        /// The ``LiveRules/generation`` of the rules that planned the query: a reload retires the entry.
        let rulesGeneration: UInt64

        init(name: HostName, family: AddressFamily, answer: ResolutionOutcome.Answer, template: ReplyTemplate,
             type: DNSQueryMetrics.QueryType, outcome: DNSQueryMetrics.Outcome, rulesGeneration: UInt64) {
            self.name = name
            self.family = family
            self.answer = answer
            self.template = template
            self.type = type
            self.outcome = outcome
            self.rulesGeneration = rulesGeneration
        }
    }

    /// The most entries kept. A response is about a hundred octets, its key about forty.
    let maximumEntries: Int
    private let entries = Mutex<[AnswerKey: Entry]>([:])

    init(maximumEntries: Int = 32_768) {
        self.maximumEntries = max(1, maximumEntries)
    }

    func entry(for key: AnswerKey) -> Entry? {
        entries.withLock { $0[key] }
    }

    func keep(_ entry: Entry, for key: AnswerKey) {
        entries.withLock { entries in
            if entries.count >= maximumEntries, entries[key] == nil { entries.removeAll(keepingCapacity: true) }
            entries[key] = entry
        }
    }

    var count: Int { entries.withLock { $0.count } }
}
