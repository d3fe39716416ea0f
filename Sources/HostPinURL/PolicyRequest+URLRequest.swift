import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

extension PolicyRequest {
    /// `request` as the rules see it; `nil` when it has no URL.
    init?(_ request: URLRequest) {
        guard let url = request.url else { return nil }
        self.init(method: request.httpMethod ?? "GET", url: url,
                  headers: (request.allHTTPHeaderFields ?? [:]).map { (name: $0.key, value: $0.value) })
    }
}

extension URLRequest {
    /// Applies a header rule's edits in order: `set` replaces the field, `add` appends a value (Foundation
    /// joins values of one field with commas), `remove` drops it.
    mutating func apply(_ edits: [HeaderEdit]) {
        for edit in edits {
            switch edit {
            case .set(let name, let value): setValue(value, forHTTPHeaderField: name)
            case .add(let name, let value): addValue(value, forHTTPHeaderField: name)
            case .remove(let name): setValue(nil, forHTTPHeaderField: name)
            }
        }
    }
}
