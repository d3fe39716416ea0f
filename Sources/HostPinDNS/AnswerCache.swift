import HostPin
import Synchronization

/// The stub's responses to A and AAAA queries answered from the trusted cache, kept as ldns wrote them
/// (``ReplyTemplate``) under the query's ``AnswerKey``: a query asked again skips reading it, planning
/// it and writing its response with ldns, which cost a cache hit most of its CPU time (perf, cpu-clock;
/// Benchmarks/README.md, item 7).
///
/// An entry is used only while the trusted cache returns the same answer it was made from: each hit
/// still looks the name up there (``CachingResolver/cachedAnswer(_:family:)``, so the cache's
/// statistics count it and refresh-ahead starts as for any hit), and takes its age from it: for an
/// address answer the trusted cache's entry read in place, compared by its generation (no answer is
/// built or compared, nothing allocated); for a negative one the answer itself. The trusted
/// cache's expiry, removal or refresh of the name thus retires the entry at once; the next query
/// writes a new one; so does a replacement of the rules (``LiveRules/generation``). Bounded by
/// ``maximumEntries``: storing past it empties the table (each entry
/// is rebuilt by the next query for it).
final class AnswerCache: Sendable {
    /// A class, so a hit copies one reference out of the lock rather than each of its fields.
    final class Entry: Sendable {
        let name: HostName
        let family: AddressFamily
        /// What the trusted cache answered when the response was written: the generation of its entry
        /// for addresses, the answer itself otherwise.
        private let made: Made
        let template: ReplyTemplate
        /// The labels the response is counted under.
        let type: DNSQueryMetrics.QueryType
        let outcome: DNSQueryMetrics.Outcome
        /// The ``LiveRules/generation`` of the rules that planned the query: a reload retires the entry.
        let rulesGeneration: UInt64

        private enum Made {
            case entry(generation: UInt32)
            case answer(ResolutionOutcome.Answer)
        }

        init(name: HostName, family: AddressFamily, answer: CachedAnswer, template: ReplyTemplate,
             type: DNSQueryMetrics.QueryType, outcome: DNSQueryMetrics.Outcome, rulesGeneration: UInt64) {
            self.name = name
            self.family = family
            made = switch answer {
            case .addresses(let addresses): .entry(generation: addresses.generation)
            case .outcome(let outcome): .answer(outcome.answer)
            }
            self.template = template
            self.type = type
            self.outcome = outcome
            self.rulesGeneration = rulesGeneration
        }

        /// Whether the response was written from `answer`: the same trusted-cache entry (its generation
        /// tells a refreshed or replaced one), or an equal answer.
        func isMade(from answer: CachedAnswer) -> Bool {
            switch (made, answer) {
            case (.entry(let generation), .addresses(let addresses)): generation == addresses.generation
            case (.answer(let kept), .outcome(let outcome)): kept == outcome.answer
            default: false
            }
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
