/// What is left of a record's TTL once its answer has been cached a while: what `dig` shows of an
/// answer from a caching resolver, and what `hostpin serve` answers (README, "The DNS stub"). The
/// library's ``HostPin/Resolution`` keeps the TTLs as received; ``HostPin/ResolutionOutcome/age`` says
/// how old the answer is.
enum RemainingTTL {
    /// `ttl` (seconds, as received) less `age` (whole seconds the answer has been cached), at least 0.
    static func of(_ ttl: UInt32, age: UInt32) -> UInt32 {
        ttl > age ? ttl - age : 0
    }
}
