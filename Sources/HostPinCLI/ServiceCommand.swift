import HostPin
import HostPinService

/// A long-running subcommand (`serve`, `proxy`): its arguments parse into a ``ServiceConfiguration``,
/// which runs as a ``Service`` until SIGINT or SIGTERM, reloaded on SIGHUP with the arguments parsed
/// again (the configuration file and the files it names read anew).
protocol ServiceCommand: Subcommand {
    /// What the arguments and the configuration file say.
    var configuration: ServiceConfiguration { get }
    /// The arguments, parsed again on SIGHUP.
    var commandLine: [String] { get }
}

extension ServiceCommand {
    func run() async -> ExitStatus {
        let commandLine = commandLine
        return await Self.run(configuration) { () throws(UsageError) in
            var parser = OptionParser(commandLine)
            return try Self(parsing: &parser).configuration
        }
    }

    /// Runs the service `configuration` describes until SIGINT or SIGTERM, reloading on SIGHUP with the
    /// configuration `reparse` reads (on a thread of its own: it reads files); a second SIGINT or SIGTERM
    /// cuts the proxy's transfers still in flight.
    ///
    /// - Returns: 0 after a clean stop, 1 when a listener cannot be set up, 3 when the trusted resolver
    ///   or the watched local resolver cannot.
    static func run(_ configuration: ServiceConfiguration,
                    reparse: @escaping @Sendable () throws(UsageError) -> ServiceConfiguration) async -> ExitStatus {
        // First: from here on SIGHUP asks for a reload, and SIGINT or SIGTERM for a stop, instead of ending
        // the process — the service says it listens before this function waits for them.
        let requests = ReloadSignal.requests()
        StopSignal.install()
        Console.configureLog(level: configuration.log.level, format: configuration.log.format)
        let service: Service
        do throws(ServiceError) {
            service = try await Service.start(configuration)
        } catch {
            Console.error("hostpin: \(error)")
            if case .dnsListen(.bind) = error {
                Console.error("hostpin: choose another address with --dns-listen IP:PORT: any address of 127.0.0.0/8 "
                              + "will do (127.0.0.53:53), or a port above 1023 (127.0.0.1:5300)")
            }
            return error.exitStatus
        }
        let reloader = Task {
            for await _ in requests { await reload(service, reparse) }
        }
        await StopSignal.wait()
        reloader.cancel()
        await reloader.value
        // A second signal cuts what is left at once (its thread may still wait when the process exits).
        Task {
            await StopSignal.wait()
            await service.cutTransfers()
        }
        await service.stop()
        return .success
    }

    /// One SIGHUP: the arguments parsed again, then put in force; a bad parse or a refused reload
    /// changes nothing (the service says why in one line).
    private static func reload(_ service: Service,
                               _ reparse: @escaping @Sendable () throws(UsageError) -> ServiceConfiguration) async {
        // The body throws nothing: `try?` only satisfies the signature.
        let parsed = try? await Blocking.run { () -> Result<ServiceConfiguration, UsageError> in
            do throws(UsageError) {
                return .success(try reparse())
            } catch {
                return .failure(error)
            }
        }
        let refused: String
        switch parsed {
        case .success(let configuration)?:
            guard (try? await service.reload(to: configuration)) != nil else { return }
            Console.configureLog(level: configuration.log.level, format: configuration.log.format)
            return
        case .failure(let error)?: refused = error.description
        case nil: refused = "the command line could not be read again"
        }
        service.log.log(.warning, "hostpin: \(ServiceError.reloadRefused(refused))")
    }

    /// The SIGNALS section of the help.
    static var signalsHelp: String {
        """
        SIGNALS:
          SIGINT, SIGTERM  stop (the proxy's transfers in flight get --grace; a second signal cuts them).
          SIGHUP           reload: the command line's files (--config, --rules, --preresolve) are read
                           and checked again, then put in force at once, keeping the cache; a bad one
                           changes nothing ('hostpin: reload refused, ...': README.md, "Reload").
        """
    }
}

extension ServiceError {
    /// The exit status of `serve` or `proxy` that could not start this way.
    var exitStatus: ExitStatus {
        switch self {
        case .upstreams, .watch: .upstreamFailure
        case .accessLog, .dnsListen, .proxyListen, .metricsListen, .control, .reloadRefused: .notFound
        }
    }
}
