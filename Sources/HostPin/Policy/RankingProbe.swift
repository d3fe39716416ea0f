import CCurl
import Synchronization

/// Background TLS probes that teach a ``SharedAddressRanking`` what a connection whose TLS is not
/// HostPin's own cannot: a forward proxy's CONNECT tunnel carries the client's handshake end to end, so
/// its TCP connect time says nothing about the certificate (a sinkhole answers fastest). For such a
/// target the proxy asks ``probe(_:port:addresses:report:)``, which handshakes with each address as a
/// client would (``CertificateProbe``'s handshake: libcurl, `CURLOPT_CONNECT_ONLY`, SNI and the check
/// for the name, no request sent) and feeds the ranking:
///
/// - a valid certificate: the handshake time (TCP and TLS up, the certificate verified) is a sample;
/// - a certificate that fails the check for the name: the address is excluded for the name (a likely
///   sinkhole) and reported to `report`, once per exclusion;
/// - no handshake in ``Configuration/timeout`` (an address that accepts and never speaks, one that
///   drops packets or refuses): the timeout is recorded as its time, so it ranks after every address
///   that answered in time. Such a sample can only lower an address, never lift it above a verified one.
///
/// Bounded: a name and port is probed at most once per ``Configuration/interval`` (remembered for at
/// most ``Configuration/maximumNames`` names), at most ``Configuration/maximumAddresses`` of its
/// addresses, at most ``Configuration/maximumConcurrentProbes`` names at once (a request beyond it is
/// dropped, and the next one for the name asks again). Each probed name runs on a thread of its own
/// (one of ``CurlThreads``), its addresses one after another, so no handshake competes with another for
/// the measure and nothing blocks Swift's pool; a process that shuts ``CurlThreads`` down stops them.
public final class RankingProbe: Sendable {
    /// What the probes may do.
    public struct Configuration: Sendable {
        /// The longest one handshake may take, connecting included; a slower address is recorded with
        /// this time. Default: 2 seconds.
        public var timeout: Duration = .seconds(2)
        /// How long a probed name and port is left alone before it may be probed again. Default: 5 minutes.
        public var interval: Duration = .seconds(300)
        /// The most names probed at once (each a thread). Default: 4.
        public var maximumConcurrentProbes = 4
        /// The most addresses of one name probed, in the order given. Default: 8.
        public var maximumAddresses = 8
        /// The most (name, port) pairs whose last probe is remembered. Default: 10 000.
        public var maximumNames = 10_000
        /// A PEM file of CA certificates trusted besides the system's. Default: none.
        public var caFile: String?

        /// The defaults above.
        public init() {}
    }

    /// What one probe of an address does.
    public enum Handshake: Sendable, Hashable {
        /// A TLS handshake, the certificate verified for the name (``CertificateProbe``'s): for TLS ports.
        case tls
        /// A TCP connection only (`CURLOPT_CONNECT_ONLY` on an `http` URL), timed to connected: for
        /// plain-HTTP origins, where there is no certificate to check (and so no sinkhole to find).
        case tcp
    }

    /// An address whose certificate failed the check for the name: a likely sinkhole, now excluded.
    public struct Sinkhole: Sendable, Hashable, CustomStringConvertible {
        public let name: HostName
        public let address: IPAddress
        public let port: UInt16
        /// What the check said (another name, no trusted chain).
        public let failure: EncryptedTransportFailure

        public var description: String {
            "\(address.uriHost):\(port) is a likely sinkhole for \(name) (excluded): \(failure)"
        }
    }

    private struct Target: Hashable, Sendable {
        let name: String
        let port: UInt16
    }

    private struct State: Sendable {
        var probed: RecencyTable<Target, Void>
        var running = 0
    }

    /// The ranking fed.
    public let ranking: SharedAddressRanking
    /// What the probes may do.
    public let configuration: Configuration
    private let threads: CurlThreads
    private let state: Mutex<State>

    /// - Parameters:
    ///   - ranking: Where the times and exclusions go.
    ///   - configuration: The limits and the extra CA file.
    ///   - threads: The registry the probe threads are started in: ``CurlThreads/process`` by default.
    public init(ranking: SharedAddressRanking, configuration: Configuration = Configuration(),
                threads: CurlThreads = .process) {
        self.ranking = ranking
        self.configuration = configuration
        self.threads = threads
        state = Mutex(State(probed: RecencyTable(capacity: configuration.maximumNames, lifetime: configuration.interval)))
    }

    /// Probes `addresses` of `name` on `port` in the background, unless that name and port was probed
    /// within ``Configuration/interval`` or ``Configuration/maximumConcurrentProbes`` probes run.
    /// Returns at once: one lock and, when it probes, a thread started.
    ///
    /// - Parameters:
    ///   - name: The name the certificates must be valid for (its normalised form is the ranking's key).
    ///   - port: The TLS port.
    ///   - addresses: The addresses to probe (the first ``Configuration/maximumAddresses``).
    ///   - handshake: What to time: ``Handshake/tls`` (the default) or ``Handshake/tcp``.
    ///   - report: Called from the probe's thread once per address newly excluded as a likely sinkhole.
    ///   - done: Called from the probe's thread when every address was probed (tests wait for it).
    /// - Returns: Whether a probe was started.
    @discardableResult
    public func probe(_ name: HostName, port: UInt16, addresses: [IPAddress], handshake: Handshake = .tls,
                      report: (@Sendable (Sinkhole) -> Void)? = nil, done: (@Sendable () -> Void)? = nil) -> Bool {
        guard name.literalAddress == nil, !addresses.isEmpty else { return false }
        let target = Target(name: name.description, port: port)
        let now = ContinuousClock.now
        let admitted = state.withLock { state -> Bool in
            guard state.running < configuration.maximumConcurrentProbes,
                  state.probed.value(for: target, at: now) == nil else { return false }
            state.running += 1
            state.probed.update(target, at: now) { _ in () }
            return true
        }
        guard admitted else { return false }
        let transfer = StoppableTransfer()
        let chosen = Array(addresses.prefix(configuration.maximumAddresses))
        let started = threads.start(name: "hostpin-rank-probe", stop: { transfer.stop() }) { [self] in
            run(name, port, chosen, handshake, transfer, report)
            state.withLock { $0.running -= 1 }
            done?()
        }
        if !started {
            state.withLock { $0.running -= 1 }
        }
        return started
    }

    /// How many probes run now.
    public var runningCount: Int { state.withLock { $0.running } }

    /// Forgets which names were probed (the network changed: probe them again).
    public func forgetProbed() {
        state.withLock { $0.probed.removeAll() }
    }

    /// The probe's body, on its own thread: each address in turn, its outcome into the ranking.
    private func run(_ name: HostName, _ port: UInt16, _ addresses: [IPAddress], _ handshake: Handshake,
                     _ transfer: StoppableTransfer, _ report: (@Sendable (Sinkhole) -> Void)?) {
        let key = name.description
        for address in addresses {
            let (outcome, time) = switch handshake {
            case .tls: CertificateProbe.timedHandshake(name, address, port, configuration.caFile, configuration.timeout, transfer)
            case .tcp: Self.timedConnect(name, address, port, configuration.timeout, transfer)
            }
            switch outcome {
            case .valid:
                ranking.record(time ?? configuration.timeout, to: address, port: port)
            case .invalid(let failure):
                if ranking.exclude(address, for: key) {
                    report?(Sinkhole(name: name, address: address, port: port, failure: failure))
                }
            case .failed(.cancelled):
                return  // the process is stopping
            case .failed:
                ranking.record(configuration.timeout, to: address, port: port)
            }
        }
    }

    /// One TCP connection to `address`:`port`, waited for on the calling thread; `transfer`'s stop ends
    /// it early. The outcome is ``CertificateProbe/Outcome/valid`` when it connected (nothing to verify
    /// on plain HTTP), with the time to connected (`CURLINFO_CONNECT_TIME_T` less the look-up).
    static func timedConnect(_ name: HostName, _ address: IPAddress, _ port: UInt16, _ timeout: Duration,
                             _ transfer: StoppableTransfer) -> (outcome: CertificateProbe.Outcome, time: Duration?) {
        var server = EncryptedUpstream(transport: .https(path: "/"), name: name, port: port)
        server.bootstrap = [address]
        guard let curl = UpstreamCurlHandle(upstream: server, url: "http://\(name.text):\(port)/") else {
            return (.failed(.transferFailed(code: Int(CURLE_OUT_OF_MEMORY.rawValue), message: "libcurl could not create a handle")), nil)
        }
        defer { curl.close() }
        curl.set(CURLOPT_PROTOCOLS_STR, "http")  // the handle's default is https only
        curl.set(CURLOPT_CONNECT_ONLY, 1)
        curl.set(CURLOPT_TIMEOUT_MS, max(1, timeout.millisecondsRoundedUp))  // 0 would mean "no timeout"
        guard curl.setupResult == CURLE_OK else { return (.failed(curl.failure(curl.setupResult)), nil) }
        guard let code = transfer.perform(curl.raw) else { return (.failed(.cancelled), nil) }
        guard code == CURLE_OK else { return (.failed(curl.failure(code)), nil) }
        var connected: curl_off_t = 0
        var lookup: curl_off_t = 0
        guard hostpin_curl_getinfo_offset(curl.raw, CURLINFO_CONNECT_TIME_T, &connected) == CURLE_OK else { return (.valid, nil) }
        _ = hostpin_curl_getinfo_offset(curl.raw, CURLINFO_NAMELOOKUP_TIME_T, &lookup)
        return (.valid, .microseconds(max(0, connected - lookup)))
    }
}
