import Foundation
import HostPin

extension JSONValue {
    /// The value as JSON text, keys sorted; whole numbers without a fraction.
    package func jsonData(pretty: Bool = false) -> Data {
        var options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]
        if pretty { options.insert(.prettyPrinted) }
        // A tree of Foundation values built here from JSON values: serialising it cannot fail.
        return (try? JSONSerialization.data(withJSONObject: foundationObject, options: options)) ?? Data()
    }

    /// The value as `JSONSerialization` takes it.
    private var foundationObject: Any {
        switch self {
        case .null: NSNull()
        case .bool(let flag): flag
        case .number(let number): number.rounded() == number && abs(number) < 1e15 ? Int(number) as Any : number as Any
        case .string(let text): text
        case .array(let items): items.map(\.foundationObject)
        case .object(let fields): fields.mapValues(\.foundationObject)
        }
    }
}
