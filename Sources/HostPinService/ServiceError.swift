import HostPin
import HostPinDNS
import HostPinNet

/// Why a ``Service`` could not start, or why a reload changed nothing. Each `description` is the sentence
/// `hostpin serve` prints after `hostpin: `.
public enum ServiceError: Error, Sendable, CustomStringConvertible {
    /// The trusted resolver could not be set up (a transport of an upstream).
    case upstreams(ResolutionError)
    /// The local resolver to watch (`watch.local`) could not be set up.
    case watch(ResolutionError)
    /// The access log file could not be opened.
    case accessLog(AccessLogFileError)
    /// A DNS listening address could not be bound (in use, a port below 1024 without privilege).
    case dnsListen(DNSServerError)
    /// The proxy could not listen.
    case proxyListen(ListenError)
    /// The metrics endpoint could not listen.
    case metricsListen(ListenError)
    /// The control socket could not be made.
    case control(ControlSocketError)
    /// A reload was refused: nothing changed, for this reason.
    case reloadRefused(String)

    public var description: String {
        switch self {
        case .upstreams(let error): "\(error)"
        case .watch(let error): "the local resolver to watch: \(error)"
        case .accessLog(let error): "\(error)"
        case .dnsListen(let error): "\(error)"
        case .proxyListen(let error): "\(error)"
        case .metricsListen(let error): "--metrics-listen: \(error)"
        case .control(let error): "\(error)"
        case .reloadRefused(let reason): "reload refused, nothing changed: \(reason)"
        }
    }
}
