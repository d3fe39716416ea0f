import HostPin

/// One message as ``DNSResponder`` has read and planned it without waiting: its response, or what the
/// response waits for. Cache hits, rule answers and refusals are ready at once, so a server answers
/// them where it received them and starts a task only for the rest.
enum PreparedResponse: Sendable {
    /// The response (bytes `nil` when the message gets none) with the labels it is counted under.
    case ready(DNSResponder.Reply)
    /// An A or AAAA query whose name the trusted cache does not hold fresh: resolve it.
    case resolve(DNSQuery, HostName, AddressFamily)
    /// A query of another type (or, with validation on, an A or AAAA query with DO or CD) that the
    /// forward cache does not hold: ask the forwarder.
    case forward(DNSQuery, ForwardKey, any DNSForwarder)
}
