extension Duration {
    /// The duration in whole milliseconds, rounded up (a poll woken before its deadline would only spin
    /// until it), 0 for a duration that is not positive. For curl and `poll(2)`, which count in ms.
    var millisecondsRoundedUp: Int {
        let (seconds, attoseconds) = components
        guard seconds > 0 || (seconds == 0 && attoseconds > 0) else { return 0 }
        return Int(seconds) * 1000 + Int((attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000)
    }
}
