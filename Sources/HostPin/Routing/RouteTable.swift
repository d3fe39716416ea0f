/// The routes of split DNS, checked, and the one lookup that picks a name's route: the longest domain
/// that holds the name by whole labels, or none (the default upstream list).
///
/// The lookup costs one dictionary probe per label of the name, whatever the number of routes (100
/// routes cost what 1 does), and runs only on the way to an upstream: a cache hit never asks.
public struct RouteTable: Sendable, Hashable, CustomStringConvertible {
    /// The routes, in the order given.
    public let routes: [Route]
    /// Each domain's text → the index of its route in ``routes``.
    private let byDomain: [String: Int]

    /// No route: every name goes to the default list.
    public static let none = RouteTable()

    /// No route.
    public init() {
        routes = []
        byDomain = [:]
    }

    /// Checks `routes` and indexes their domains.
    ///
    /// - Throws: ``RouteError/noDomains(_:)``, ``RouteError/noUpstreams(_:)``,
    ///   ``RouteError/addressLiteral(_:)``, ``RouteError/specialUse(_:_:)`` for a zone HostPin always
    ///   answers itself (or a domain above one: `arpa` would take `resolver.arpa`), and
    ///   ``RouteError/duplicateDomain(_:)``.
    public init(_ routes: [Route]) throws(RouteError) {
        var byDomain: [String: Int] = [:]
        for (index, route) in routes.enumerated() {
            guard let first = route.domains.first else { throw .noDomains(route) }
            guard !route.upstreams.isEmpty else { throw .noUpstreams(first) }
            for domain in route.domains {
                guard domain.literalAddress == nil else { throw .addressLiteral(domain) }
                if let zone = Self.neverRouted(domain) { throw .specialUse(domain, zone) }
                guard byDomain.updateValue(index, forKey: domain.text) == nil else { throw .duplicateDomain(domain) }
            }
        }
        self.routes = routes
        self.byDomain = byDomain
    }

    /// Whether there is no route.
    public var isEmpty: Bool { routes.isEmpty }

    /// The never-routed special-use zone at, below or above `domain`, if any.
    private static func neverRouted(_ domain: HostName) -> SpecialUseName? {
        if let zone = SpecialUseName.entry(containing: domain.text), !zone.mayBeRouted { return zone }
        return SpecialUseName.table.first { zone in
            !zone.mayBeRouted && zone.zone.hasSuffix("." + domain.text)
        }
    }

    /// The index in ``routes`` of the route for `name`: the longest of their domains equal to `name` or
    /// a suffix of it at a label boundary; `nil` for the default list. An IP literal, `localhost` and the
    /// special-use zones that are never routed have no route.
    ///
    /// - Parameter name: A normalised name (``HostName/parse(_:)``).
    public func routeIndex(for name: HostName) -> Int? {
        guard !byDomain.isEmpty, name.literalAddress == nil, !name.isLocalhost else { return nil }
        return routeIndex(forText: name.text)
    }

    /// ``routeIndex(for:)`` for a name in presentation form as a DNS question carries it (letters in any
    /// case, `\.` an escaped dot inside a label, a trailing dot or none).
    ///
    /// - Parameter name: The question's name; the root (empty) has no route.
    public func routeIndex(forQuestionName name: String) -> Int? {
        guard !byDomain.isEmpty else { return nil }
        var text = name.lowercased()
        if text.hasSuffix("."), !text.hasSuffix("\\.") { text.removeLast() }
        return routeIndex(forText: text)
    }

    /// The route for `name` (``routeIndex(for:)``).
    public func route(for name: HostName) -> Route? {
        routeIndex(for: name).map { routes[$0] }
    }

    /// Tries `text`, then each suffix after an unescaped dot, longest first.
    private func routeIndex(forText text: String) -> Int? {
        guard !text.isEmpty else { return nil }
        if let index = byDomain[text] { return index }
        var escaped = false
        var position = text.startIndex
        while position < text.endIndex {
            let character = text[position]
            position = text.index(after: position)
            if escaped {
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == ".", position < text.endIndex, let index = byDomain[String(text[position...])] {
                return index
            }
        }
        return nil
    }

    /// Whether `name` is at or below `domain` by whole labels (`www.corp.test` is under `corp.test`,
    /// `xcorp.test` is not).
    public static func name(_ name: HostName, isAtOrBelow domain: HostName) -> Bool {
        name.text == domain.text || name.text.hasSuffix("." + domain.text)
    }

    /// Every domain of every route, in route order: what a reload compares.
    public var domains: [HostName] { routes.flatMap(\.domains) }

    public var description: String { routes.map(\.description).joined(separator: " ") }

    public static func == (lhs: RouteTable, rhs: RouteTable) -> Bool { lhs.routes == rhs.routes }

    public func hash(into hasher: inout Hasher) { hasher.combine(routes) }
}
