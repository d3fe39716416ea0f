import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif
import HostPin

extension URLError {
    /// The error of a request a `block` rule refused: `.resourceUnavailable` (URLError has no code for a
    /// refusal by policy), saying `blocked by rules[0] (block host ads.example.test)`, with the rule's
    /// description under ``PinnedURLProtocol/ruleUserInfoKey``.
    static func blocked(by rule: RuleReference, url: URL?) -> URLError {
        var info: [String: Any] = [NSLocalizedDescriptionKey: "blocked by \(rule)",
                                   PinnedURLProtocol.ruleUserInfoKey: rule.description]
        if let url { info[NSURLErrorFailingURLErrorKey] = url }
        return URLError(.resourceUnavailable, userInfo: info)
    }
}
