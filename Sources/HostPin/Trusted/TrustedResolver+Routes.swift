extension TrustedResolver.Configuration {
    /// The configuration of the resolver for `route`: its upstreams and DNSSEC settings, this
    /// configuration's timeouts, tries, budget, TCP and hold-downs, no untrusted fallback (a routed name
    /// is asked of nobody but the route's servers) and no routes of its own.
    func configuration(for route: Route) -> Self {
        var configuration = self
        configuration.upstreams = route.upstreams
        configuration.dnssec = route.dnssec
        configuration.untrustedFallback = nil
        configuration.routes = .none
        return configuration
    }
}

extension TrustedResolver {
    /// The resolver that asks for `name`: a route's (``Configuration/routes``), or this one for every name
    /// no route takes and for IP literals, `localhost` and the special-use zones that are never routed.
    func resolver(for name: HostName) -> TrustedResolver {
        guard !routeResolvers.isEmpty, let index = configuration.routes.routeIndex(for: name) else { return self }
        return routeResolvers[index]
    }

    /// The resolver that forwards `question` (``resolver(for:)`` for a question's name).
    func resolver(forQuestionName name: String) -> TrustedResolver {
        guard !routeResolvers.isEmpty, let index = configuration.routes.routeIndex(forQuestionName: name) else {
            return self
        }
        return routeResolvers[index]
    }

    /// Each route's resolver with its route, in ``Configuration/routes`` order: their own ``health`` and
    /// ``metrics`` (what `ctl upstreams`, the status page and the metrics show per route).
    public var routed: [(route: Route, resolver: TrustedResolver)] {
        Array(zip(configuration.routes.routes, routeResolvers))
    }

    /// Whether `name` is of a special-use zone that may be routed (the reverse zones, `home.arpa`) and a
    /// route takes it: then it is asked of that route's servers instead of answered locally.
    public func routesSpecialUse(_ name: HostName) -> Bool {
        configuration.routes.routeIndex(for: name) != nil
    }

    /// Whether `name`'s route, if any, serves stale answers (``Route/serveStale``); true without one.
    public func servesStale(_ name: HostName) -> Bool {
        configuration.routes.route(for: name)?.serveStale ?? true
    }

    /// Whether a route takes `name` and allows it private addresses (``Route/allowPrivate``).
    public func allowsPrivateAddresses(for name: HostName) -> Bool {
        configuration.routes.route(for: name)?.allowPrivate ?? false
    }
}
