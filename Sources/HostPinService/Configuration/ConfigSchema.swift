import Foundation
import HostPin
import HostPinDNS
import HostPinNet

/// What one key of a configuration file holds once read.
package enum ConfigValue: Sendable {
    /// The values of the key's option, as the command line writes them.
    case values([String])
    /// A flag (`listeners.allowRemote`): on or off.
    case flag(Bool)
    /// The embedded rules.
    case rules(Rules)
    /// `cache.preresolve`: the names.
    case names([HostName])
}

/// One key of the configuration file (README.md, "Configuration file"): its key path, the option it
/// stands for, the subcommands that take that option, its default (as `check-config` prints it) and how
/// its JSON is read.
///
/// A configuration file is the command line written down: every key is an option, so each subcommand
/// parses and validates it exactly as the option, and an option given on the command line replaces the
/// file's value (all of it, for a repeatable one). A subcommand ignores the keys it has no option for.
package struct ConfigKey: Sendable {
    /// `cache.maxStale`.
    package let path: String
    /// The option the key stands for; `nil` for `rules` and `cache.preresolve`, which no option
    /// writes the same way (`--rules FILE`, `--preresolve FILE` replace them).
    package let option: String?
    /// The subcommands that take the option.
    package let commands: Set<String>
    /// The value in force when the key is absent, as JSON (`null`: none).
    package let defaultValue: JSONValue
    /// Whether the value is a path, which `check-config` prints as the process opens it (relative ones
    /// are read from the configuration file's folder).
    package var isPath = false
    /// Reads the key's JSON at its key path; `nil` when it has a problem (recorded in the reader).
    package let read: @Sendable (JSONValue, String, inout ConfigReader) -> ConfigValue?
}

/// Every key of the configuration file, in the order README.md documents them.
package enum ConfigSchema {
    private static let resolving: Set<String> = ["lookup", "fetch", "proxy", "serve"]
    private static let caching: Set<String> = ["lookup", "proxy", "serve"]
    private static let running: Set<String> = ["proxy", "serve"]

    /// The sections of the top-level object, and the top-level keys that are not sections.
    package static let sections = ["upstreams", "resolution", "cache", "listeners", "dns", "watch", "proxy", "log", "network"]
    package static let topLevel = sections + ["routes", "rules"]

    package static let keys: [ConfigKey] = [
        ConfigKey(path: "upstreams.servers", option: "--server", commands: resolving,
                  defaultValue: .array(UpstreamSelection.publicDefaults.map { .string($0.description) })) { value, path, reader in
            guard let texts = reader.strings(value, path, of: "upstreams") else { return nil }
            var valid = true
            for (index, text) in texts.enumerated() {
                do throws(Upstream.ParseError) {
                    _ = try Upstream.parse(text)
                } catch {
                    reader.report("\(path)[\(index)]", .badUpstream(error))
                    valid = false
                }
            }
            return valid ? .values(texts) : nil
        },
        ConfigKey(path: "upstreams.bootstrap", option: "--bootstrap", commands: resolving, defaultValue: .object([:])) {
            value, path, reader in
            entries(value, path, &reader, of: "IP addresses", separator: ",") { text throws(EncryptedUpstreamError) in
                _ = try UpstreamBootstrap.parse(text)
            }
        },
        ConfigKey(path: "upstreams.pins", option: "--pin", commands: resolving, defaultValue: .object([:])) { value, path, reader in
            entries(value, path, &reader, of: "sha256//BASE64 pins", separator: ";") { text throws(EncryptedUpstreamError) in
                _ = try UpstreamPin.parse(text)
            }
        },
        ConfigKey(path: "upstreams.caFile", option: "--ca-file", commands: resolving, defaultValue: .null, isPath: true) { value, path, reader in
            guard let text = reader.string(value, path) else { return nil }
            let file = reader.absolute(text)
            if let reason = FileAccess.unreadable(file) ?? CAFileProblem(checking: file)?.reason {
                reader.report(path, .file(file, reason: reason))
                return nil
            }
            return .values([file])
        },
        ConfigKey(path: "resolution.timeout", option: "--timeout", commands: ["lookup", "fetch", "serve"],
                  defaultValue: .number(5)) { value, path, reader in
            seconds(value, path, &reader, in: 0.001...3600)
        },
        ConfigKey(path: "resolution.family", option: "--family", commands: resolving, defaultValue: .string("any")) {
            value, path, reader in
            guard let text = reader.string(value, path) else { return nil }
            guard ["4", "6", "any"].contains(text) else {
                reader.report(path, .badChoice(text, choices: ["4", "6", "any"]))
                return nil
            }
            return .values([text])
        },
        ConfigKey(path: "resolution.dnssec", option: "--dnssec", commands: resolving,
                  defaultValue: .string(DNSSECOptions.defaultMode.rawValue)) { value, path, reader in
            choice(value, path, &reader, DNSSECMode.allCases.map(\.rawValue))
        },
        // Each file is read as `--trust-anchor` reads it: a bad one is a problem at its index, with the line.
        ConfigKey(path: "resolution.trustAnchors", option: "--trust-anchor", commands: resolving, defaultValue: .null,
                  isPath: true) { value, path, reader in
            guard let texts = reader.strings(value, path, of: "trust-anchor files") else { return nil }
            var files: [String] = []
            for (index, text) in texts.enumerated() {
                let file = reader.absolute(text)
                do throws(TrustAnchorError) {
                    _ = try TrustAnchors.load(path: file)
                    files.append(file)
                } catch {
                    reader.report("\(path)[\(index)]", .file(file, reason: error.reason))
                }
            }
            return files.count == texts.count ? .values(files) : nil
        },
        ConfigKey(path: "resolution.insecureDomains", option: "--insecure-domain", commands: resolving,
                  defaultValue: .array([])) { value, path, reader in
            guard let texts = reader.strings(value, path, of: "domain names", nonEmpty: false) else { return nil }
            var valid = true
            for (index, text) in texts.enumerated() {
                do throws(UsageError) {
                    _ = try DNSSECOptions.parseInsecureDomain(text)
                } catch {
                    let reason = if case .invalidValue(_, let reason) = error { reason } else { error.description }
                    reader.report("\(path)[\(index)]", .badDomain(reason: reason))
                    valid = false
                }
            }
            return valid ? .values(texts) : nil
        },
        // Each route object is written as the `--route` value it stands for, so the command line's parser
        // checks it; a problem is reported at the object's key path here first.
        ConfigKey(path: "routes", option: "--route", commands: resolving, defaultValue: .array([])) {
            value, path, reader in
            guard let items = reader.array(value, path, of: "routes", nonEmpty: false) else { return nil }
            var texts: [String] = []
            for (index, item) in items.enumerated() {
                if let text = route(item, "\(path)[\(index)]", &reader) { texts.append(text) }
            }
            return texts.count == items.count ? .values(texts) : nil
        },
        ConfigKey(path: "cache.maxEntries", option: "--cache-size", commands: caching,
                  defaultValue: .number(Double(CacheLimitOptions.defaultMaximumEntries))) { value, path, reader in
            whole(value, path, &reader, in: CacheLimitOptions.maximumEntriesRange, unit: "entries")
        },
        ConfigKey(path: "cache.minTTL", option: "--min-ttl", commands: caching,
                  defaultValue: .number(Double(ResolutionCache.Limits().minimumTTL))) { value, path, reader in
            whole(value, path, &reader, in: CacheLimitOptions.minimumTTLRange, unit: "seconds")
        },
        ConfigKey(path: "cache.maxTTL", option: "--max-ttl", commands: caching,
                  defaultValue: .number(Double(ResolutionCache.Limits().maximumTTL))) { value, path, reader in
            whole(value, path, &reader, in: CacheLimitOptions.maximumTTLRange, unit: "seconds")
        },
        ConfigKey(path: "cache.maxNegativeTTL", option: "--max-negative-ttl", commands: caching,
                  defaultValue: .number(Double(ResolutionCache.Limits().maximumNegativeTTL))) { value, path, reader in
            whole(value, path, &reader, in: CacheLimitOptions.maximumNegativeTTLRange, unit: "seconds")
        },
        ConfigKey(path: "cache.maxStale", option: "--max-stale", commands: caching,
                  defaultValue: .number(Double(CacheOptions.defaultMaximumStale))) { value, path, reader in
            whole(value, path, &reader, in: CacheOptions.maximumStaleRange, unit: "seconds")
        },
        ConfigKey(path: "cache.staleAnswerTimeout", option: "--stale-answer-timeout", commands: caching,
                  defaultValue: .number(CacheOptions.staleAnswerTimeoutSeconds(CacheOptions.defaultStaleAnswerTimeout))) {
            value, path, reader in
            seconds(value, path, &reader, in: 0...CacheOptions.staleAnswerTimeoutLimit)
        },
        ConfigKey(path: "cache.refreshAhead", option: "--refresh-ahead", commands: running,
                  defaultValue: .number(ResolutionCache.Policy().refreshAhead)) { value, path, reader in
            reader.number(value, path, in: 0...1, whole: false, expected: "a fraction from 0 to 1").map {
                .values([ConfigReader.text(of: $0)])
            }
        },
        ConfigKey(path: "cache.file", option: "--cache-file", commands: caching, defaultValue: .null, isPath: true) { value, path, reader in
            writableFile(value, path, &reader)
        },
        ConfigKey(path: "cache.shared", option: "--shared-cache", commands: running, defaultValue: .null) { value, path, reader in
            guard let text = reader.string(value, path) else { return nil }
            do throws(RedisEndpointError) {
                _ = try RedisEndpoint.parse(text)
            } catch {
                reader.report(path, .badSharedCacheURL(text, reason: error.description))
                return nil
            }
            return .values([text])
        },
        ConfigKey(path: "cache.sharedSecretFile", option: "--shared-cache-secret", commands: running, defaultValue: .null,
                  isPath: true) { value, path, reader in
            readableFile(value, path, &reader)
        },
        ConfigKey(path: "cache.sharedPasswordFile", option: "--shared-cache-password-file", commands: running,
                  defaultValue: .null, isPath: true) { value, path, reader in
            readableFile(value, path, &reader)
        },
        ConfigKey(path: "cache.preresolve", option: nil, commands: running, defaultValue: .array([])) { value, path, reader in
            guard let texts = reader.strings(value, path, of: "host names", nonEmpty: false) else { return nil }
            var names: [HostName] = []
            var valid = true
            for (index, text) in texts.enumerated() {
                do throws(ResolutionError) {
                    let name = try HostName.parse(text)
                    if !names.contains(name) { names.append(name) }
                } catch {
                    let problem: HostNameProblem = if case .badName(_, let problem) = error { problem } else { .empty }
                    reader.report("\(path)[\(index)]", .badHostName(text, problem))
                    valid = false
                }
            }
            return valid ? .names(names) : nil
        },
        ConfigKey(path: "listeners.dns", option: "--dns-listen", commands: ["serve"],
                  defaultValue: .array([.string(ServiceConfiguration.DNS.defaultListen)])) { value, path, reader in
            guard let texts = reader.strings(value, path, of: "IP:PORT addresses") else { return nil }
            var valid = true
            for (index, text) in texts.enumerated() where SocketAddress(text) == nil {
                reader.report("\(path)[\(index)]", .badListenAddress(text))
                valid = false
            }
            return valid ? .values(texts) : nil
        },
        ConfigKey(path: "listeners.proxy", option: "--listen", commands: running, defaultValue: .null) { value, path, reader in
            listenAddress(value, path, &reader)
        },
        ConfigKey(path: "listeners.metrics", option: "--metrics-listen", commands: running, defaultValue: .null) {
            value, path, reader in
            listenAddress(value, path, &reader)
        },
        ConfigKey(path: "listeners.control", option: "--control-socket", commands: ["proxy", "serve", "ctl"],
                  defaultValue: .null) { value, path, reader in
            guard let text = reader.string(value, path) else { return nil }
            if let reason = ControlSocketPath.problem(with: text) {
                reader.report(path, .badSocketPath(text, reason: reason))
                return nil
            }
            return .values([text])
        },
        ConfigKey(path: "listeners.allowRemote", option: "--allow-remote", commands: running, defaultValue: .bool(false)) {
            value, path, reader in
            reader.bool(value, path).map { .flag($0) }
        },
        ConfigKey(path: "dns.blockedAnswer", option: "--blocked-answer", commands: ["serve"],
                  defaultValue: .string(BlockedAnswer.nxdomain.rawValue)) { value, path, reader in
            guard let text = reader.string(value, path) else { return nil }
            guard BlockedAnswer(rawValue: text) != nil else {
                reader.report(path, .badChoice(text, choices: BlockedAnswer.allCases.map(\.rawValue)))
                return nil
            }
            return .values([text])
        },
        ConfigKey(path: "watch.local", option: "--watch-local", commands: ["serve"], defaultValue: .null) { value, path, reader in
            if case .bool(true) = value { return .flag(true) }
            if case .bool(false) = value { return .flag(false) }
            guard let text = reader.string(value, path) else { return nil }
            do throws(UsageError) {
                _ = try Upstream.commandLineValue(text, option: "--watch-local", plainOnly: true)
            } catch {
                reader.report(path, .badWatchedResolver(text))
                return nil
            }
            return .values([text])
        },
        ConfigKey(path: "watch.interval", option: "--watch-interval", commands: ["serve"],
                  defaultValue: .number(Double(LocalResolverWatch.Configuration().overallInterval.components.seconds))) {
            value, path, reader in
            seconds(value, path, &reader, in: 0...86_400)
        },
        ConfigKey(path: "watch.nameInterval", option: "--watch-name-interval", commands: ["serve"],
                  defaultValue: .number(Double(LocalResolverWatch.Configuration().nameInterval.components.seconds))) {
            value, path, reader in
            seconds(value, path, &reader, in: 0...86_400)
        },
        ConfigKey(path: "watch.hijackList", option: "--hijack-list", commands: ["serve"], defaultValue: .null, isPath: true) {
            value, path, reader in
            guard let text = reader.string(value, path) else { return nil }
            let file = reader.absolute(text)
            do throws(HijackListError) {
                _ = try HijackList(contentsOf: file)
            } catch {
                if case .file(_, let problem) = error {
                    reader.report(path, .file(file, reason: problem.description))
                } else {
                    reader.report(path, .file(file, reason: error.description))
                }
                return nil
            }
            return .values([file])
        },
        ConfigKey(path: "watch.ordinary", option: "--ordinary", commands: ["serve"], defaultValue: .array([])) {
            value, path, reader in
            guard let texts = reader.strings(value, path, of: "CIDR ranges", nonEmpty: false) else { return nil }
            var valid = true
            for (index, text) in texts.enumerated() {
                do throws(IPAddressRange.ParseError) {
                    _ = try IPAddressRange.parse(text)
                } catch {
                    reader.report("\(path)[\(index)]", .badRange(text, reason: error.description))
                    valid = false
                }
            }
            return valid ? .values(texts) : nil
        },
        ConfigKey(path: "watch.noProbe", option: "--no-probe", commands: ["serve"], defaultValue: .bool(false)) {
            value, path, reader in
            reader.bool(value, path).map { .flag($0) }
        },
        ConfigKey(path: "network.noWatch", option: "--no-network-watch", commands: running, defaultValue: .bool(false)) {
            value, path, reader in
            reader.bool(value, path).map { .flag($0) }
        },
        ConfigKey(path: "proxy.allowPrivate", option: "--allow-private", commands: running, defaultValue: .bool(false)) {
            value, path, reader in
            reader.bool(value, path).map { .flag($0) }
        },
        ConfigKey(path: "proxy.noAddressRanking", option: "--no-address-ranking", commands: running, defaultValue: .bool(false)) {
            value, path, reader in
            reader.bool(value, path).map { .flag($0) }
        },
        ConfigKey(path: "proxy.allowConnectPorts", option: "--allow-connect-port", commands: running, defaultValue: .array([])) {
            value, path, reader in
            guard let items = reader.array(value, path, of: "ports", nonEmpty: false) else { return nil }
            let ports = items.enumerated().map { index, item in
                reader.number(item, "\(path)[\(index)]", in: 1...65535, whole: true, expected: "a port from 1 to 65535")
            }
            return ports.contains(where: { $0 == nil }) ? nil : .values(ports.compactMap { $0 }.map(ConfigReader.text(of:)))
        },
        ConfigKey(path: "proxy.maxConnections", option: "--max-connections", commands: running,
                  defaultValue: .number(Double(ProxyOptions.defaultMaximumConnections))) { value, path, reader in
            whole(value, path, &reader, in: 1...1_000_000, unit: "connections")
        },
        ConfigKey(path: "proxy.grace", option: "--grace", commands: running,
                  defaultValue: .number(ProxyOptions.defaultGraceSeconds)) { value, path, reader in
            seconds(value, path, &reader, in: 0...3600)
        },
        ConfigKey(path: "proxy.timeout", option: "--timeout", commands: ["proxy"],
                  defaultValue: .number(ProxyOptions.defaultTimeoutSeconds)) { value, path, reader in
            seconds(value, path, &reader, in: 0.001...3600)
        },
        ConfigKey(path: "log.level", option: "--log-level", commands: running, defaultValue: .string(LogLevel.info.rawValue)) {
            value, path, reader in
            choice(value, path, &reader, LogLevel.allCases.map(\.rawValue))
        },
        ConfigKey(path: "log.format", option: "--log-format", commands: running, defaultValue: .string(LogFormat.text.rawValue)) {
            value, path, reader in
            choice(value, path, &reader, LogFormat.allCases.map(\.rawValue))
        },
        ConfigKey(path: "log.accessLog", option: "--access-log", commands: running, defaultValue: .null, isPath: true) {
            value, path, reader in
            writableFile(value, path, &reader)
        },
        ConfigKey(path: "rules", option: nil, commands: ["fetch", "proxy", "serve"], defaultValue: .array([])) {
            value, path, reader in
            guard case .array = value else {
                reader.report(path, .wrongType(expected: "an array of rules", found: value.kind))
                return nil
            }
            do throws(RulesError) {
                let document = JSONValue.object(["rules": value]).jsonData()
                return .rules(try Rules(json: document, relativeTo: reader.folder, source: path))
            } catch {
                if case .invalid(_, let problems) = error {
                    for problem in problems { reader.report(problem.keyPath, .rule(problem.reason)) }
                }
                return nil
            }
        },
    ]

    // MARK: Readers shared by several keys

    /// One object of `routes`, `{"domains": [...], "servers": [...], "allowPrivate": true, "dnssec": "off",
    /// "trustAnchor": FILE, "serveStale": true}`, as its `--route` value.
    private static func route(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader) -> String? {
        let allowed = ["domains", "servers"] + RouteOptions.policyKeys
        guard let fields = reader.object(value, path, allowed: allowed) else { return nil }
        var valid = true
        var domains: [String] = []
        if let field = fields["domains"] {
            domains = reader.strings(field, "\(path).domains", of: "domain names") ?? []
            for (index, text) in domains.enumerated() where (try? HostName.parse(text)) == nil || text.contains(",") {
                reader.report("\(path).domains[\(index)]", .badDomain(reason: "'\(text)' is not a valid domain name"))
                valid = false
            }
        } else {
            reader.report("\(path).domains", .empty)
        }
        var servers: [String] = []
        if let field = fields["servers"] {
            servers = reader.strings(field, "\(path).servers", of: "upstreams") ?? []
            for (index, text) in servers.enumerated() {
                do throws(Upstream.ParseError) {
                    _ = try Upstream.parse(text)
                } catch {
                    reader.report("\(path).servers[\(index)]", .badUpstream(error))
                    valid = false
                }
            }
        } else {
            reader.report("\(path).servers", .empty)
        }
        var policy: [String] = []
        for key in ["allowPrivate", "serveStale"] {
            guard let field = fields[key] else { continue }
            if let flag = reader.bool(field, "\(path).\(key)") { policy.append("\(key)=\(flag)") } else { valid = false }
        }
        if let field = fields["dnssec"] {
            if case .values(let texts)? = choice(field, "\(path).dnssec", &reader, DNSSECMode.allCases.map(\.rawValue)) {
                policy.append("dnssec=\(texts[0])")
            } else {
                valid = false
            }
        }
        if let field = fields["trustAnchor"], let text = reader.string(field, "\(path).trustAnchor") {
            let file = reader.absolute(text)
            do throws(TrustAnchorError) {
                _ = try TrustAnchors.load(path: file)
                policy.append("trustAnchor=\(file)")
            } catch {
                reader.report("\(path).trustAnchor", .file(file, reason: error.reason))
                valid = false
            }
        } else if fields["trustAnchor"] != nil {
            valid = false
        }
        guard valid, !domains.isEmpty, !servers.isEmpty else { return nil }
        return domains.joined(separator: ",") + "=" + (servers + policy).joined(separator: ",")
    }

    private static func seconds(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader,
                                in range: ClosedRange<Double>) -> ConfigValue? {
        reader.number(value, path, in: range, whole: false,
                      expected: "a number of seconds from \(ConfigReader.text(of: range.lowerBound)) to \(ConfigReader.text(of: range.upperBound))")
            .map { .values([ConfigReader.text(of: $0)]) }
    }

    private static func whole<Bound: BinaryInteger>(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader,
                                                    in range: ClosedRange<Bound>, unit: String) -> ConfigValue? {
        reader.number(value, path, in: Double(range.lowerBound)...Double(range.upperBound), whole: true,
                      expected: "a whole number of \(unit) from \(range.lowerBound) to \(range.upperBound)")
            .map { .values([ConfigReader.text(of: $0)]) }
    }

    private static func choice(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader,
                               _ choices: [String]) -> ConfigValue? {
        guard let text = reader.string(value, path) else { return nil }
        guard choices.contains(text) else {
            reader.report(path, .badChoice(text, choices: choices))
            return nil
        }
        return .values([text])
    }

    /// A file the process will write (the cache file, the access log): named, made absolute, in a
    /// folder the process may write in.
    /// A path to a file the process can read now (its content is checked where the option is parsed).
    private static func readableFile(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader) -> ConfigValue? {
        guard let text = reader.string(value, path) else { return nil }
        let file = reader.absolute(text)
        if let reason = FileAccess.unreadable(file) {
            reader.report(path, .file(file, reason: reason))
            return nil
        }
        return .values([file])
    }

    private static func writableFile(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader) -> ConfigValue? {
        guard let text = reader.string(value, path) else { return nil }
        guard !text.isEmpty else {
            reader.report(path, .file(text, reason: "the file name is empty"))
            return nil
        }
        let file = reader.absolute(text)
        if let reason = FileAccess.unwritableFolder(of: file) {
            reader.report(path, .file(file, reason: reason))
            return nil
        }
        return .values([file])
    }

    private static func listenAddress(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader) -> ConfigValue? {
        guard let text = reader.string(value, path) else { return nil }
        guard SocketAddress(text) != nil else {
            reader.report(path, .badListenAddress(text))
            return nil
        }
        return .values([text])
    }

    /// `{"NAME": ["A", "B"]}` as the option writes it, `NAME=A,B` (`separator` between the values), each
    /// checked by `check`.
    private static func entries(_ value: JSONValue, _ path: String, _ reader: inout ConfigReader, of what: String,
                                separator: String, check: (String) throws(EncryptedUpstreamError) -> Void) -> ConfigValue? {
        guard case .object(let fields) = value else {
            reader.report(path, .wrongType(expected: "an object {\"NAME\": [\(what)]}", found: value.kind))
            return nil
        }
        var texts: [String] = []
        var valid = true
        for name in fields.keys.sorted() {
            guard let values = reader.strings(fields[name]!, "\(path).\(name)", of: what) else {
                valid = false
                continue
            }
            let text = "\(name)=" + values.joined(separator: separator)
            do throws(EncryptedUpstreamError) {
                try check(text)
                texts.append(text)
            } catch {
                reader.report("\(path).\(name)", .badEntry(error))
                valid = false
            }
        }
        return valid ? .values(texts) : nil
    }
}
