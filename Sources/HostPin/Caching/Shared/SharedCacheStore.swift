/// Where the shared cache's values live: a key-value store with expiry that several HostPin instances
/// reach, such as Redis (`HostPinService`'s `RedisStore`).
///
/// Both calls return at once and never block their caller: the store does its input and output on a
/// thread of its own. A store that cannot answer (down, slow, an error) answers `nil`: the shared cache
/// is never needed for an answer.
public protocol SharedCacheStore: Sendable {
    /// Asks for the value under `key`; `reply` is called exactly once with the bytes, ``SharedCacheReply/absent``,
    /// or ``SharedCacheReply/failed`` when the store failed or timed out: on the store's thread, or at once
    /// on the caller's when the store knows it cannot answer (disconnected, its queue full). `arrived` is
    /// called just before, or as soon as the store's reply is in when the store has several replies to hand
    /// out (a pipelined batch): the wait for the store ends there, the rest is this process's own work.
    /// Neither may block.
    func get(_ key: String, arrived: @escaping @Sendable () -> Void, reply: @escaping @Sendable (SharedCacheReply) -> Void)
    /// Stores `value` under `key` for `seconds` (at least 1), after which the store drops it itself.
    /// Best effort: dropped when the store is down or its queue is full.
    func set(_ key: String, value: [UInt8], seconds: UInt32)
    /// Whether the store can answer now (connected, for a store over the network). The default is true.
    var isConnected: Bool { get }
    /// How many connections the store has made, reconnections included; 0 for a store that makes none
    /// (the default).
    var connectionCount: Int { get }
}

extension SharedCacheStore {
    public var isConnected: Bool { true }
    public var connectionCount: Int { 0 }
}

/// What a ``SharedCacheStore`` answered to one `get`.
public enum SharedCacheReply: Sendable, Hashable {
    /// The stored bytes.
    case value([UInt8])
    /// No value under the key.
    case absent
    /// The store failed: not connected, an error, a timeout, its queue full.
    case failed
}
