import HostPin

/// What a forwarded reply is kept and shared under: the question, and whether the client set CD. A CD
/// client's reply was not validated (RFC 4035 §3.2.2) — it may be bogus — so it never answers a client
/// that relies on the stub's validation, nor the other way round.
struct ForwardKey: Sendable, Hashable {
    let question: ForwardedQuestion
    var checkingDisabled = false
}
