/// What the stub keeps of a query's TSIG record (RFC 8945 §4.2) to answer it: the stub holds no keys,
/// so every signed query gets NOTAUTH with an unsigned TSIG naming this key and algorithm, error BADKEY
/// (§5.2.1, §5.3.2). The MAC and other data are not kept: an unsigned error carries none.
struct TSIGRecord: Sendable, Hashable {
    /// The key's name, as received (wire form, uncompressed).
    let keyName: [UInt8]
    /// The algorithm's name (`hmac-sha256.`), as received (wire form).
    let algorithm: [UInt8]
    /// Time Signed: seconds since 1970 UTC, 48 bits (§4.2), echoed in the error response.
    let timeSigned: UInt64
    /// Fudge: the seconds of error allowed in Time Signed (§4.2), echoed.
    let fudge: UInt16
    /// Original ID: the ID of the message as its signer wrote it (§4.2), echoed.
    let originalID: UInt16

    /// The TSIG error BADKEY: the key is not known to the server (RFC 8945 §5.2.1).
    static let badKey: UInt16 = 17
}
