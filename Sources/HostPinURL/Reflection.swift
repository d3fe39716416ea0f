import Synchronization

/// Reads Foundation's internal fields by name (see ``ResponseDelivery`` and ``RequestBody``).
///
/// Finding a field by name walks a type's fields and decodes each one's type, which cost a fifth of the
/// CPU of an intercepted request when done per request; so where a label sits in a type (how many
/// superclasses up, at which index) is found once per type and label, and later reads decode only that
/// field, after checking its label still matches.
enum Reflection {
    /// A stored property's place: `depth` superclasses above the subject's type, the `index`th child there.
    private struct Location: Sendable {
        let depth: Int
        let index: Int
    }

    private struct Key: Hashable, Sendable {
        let type: ObjectIdentifier
        let label: String
    }

    /// Locations found so far; a type that lacks the label maps to `nil`, so it is not searched again.
    /// The few types FoundationNetworking passes (task and session classes) bound its size.
    private static let locations = Mutex<[Key: Location?]>([:])

    /// The stored property `label` of `subject` or its superclasses, implicitly unwrapped optionals unwrapped.
    static func child(_ label: String, of subject: Any) -> Any? {
        let key = Key(type: ObjectIdentifier(type(of: subject)), label: label)
        let known = locations.withLock { $0[key] }
        let location: Location?
        if let known {
            location = known
        } else {
            location = locate(label, in: subject)
            locations.withLock { $0[key] = location }
        }
        guard let location, let value = value(at: location, labelled: label, of: subject) else { return nil }
        let inner = Mirror(reflecting: value)
        if inner.displayStyle == .optional { return inner.children.first?.value }
        return value
    }

    /// Whether `value` is the enum case `name`, which carries no payload: checked without describing a
    /// payload (describing a closure is what made the check costly).
    static func isCase(_ value: Any, named name: String) -> Bool {
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .enum && mirror.children.isEmpty && String(describing: value) == name
    }

    private static func locate(_ label: String, in subject: Any) -> Location? {
        var mirror: Mirror? = Mirror(reflecting: subject)
        var depth = 0
        while let current = mirror {
            if let index = current.children.firstIndex(where: { $0.label == label }) {
                return Location(depth: depth, index: current.children.distance(from: current.children.startIndex, to: index))
            }
            mirror = current.superclassMirror
            depth += 1
        }
        return nil
    }

    private static func value(at location: Location, labelled label: String, of subject: Any) -> Any? {
        var mirror = Mirror(reflecting: subject)
        for _ in 0..<location.depth {
            guard let up = mirror.superclassMirror else { return nil }
            mirror = up
        }
        let children = mirror.children
        guard location.index < children.count else { return nil }
        let child = children[children.index(children.startIndex, offsetBy: location.index)]
        return child.label == label ? child.value : nil
    }
}
