/// Reason phrases for the statuses the proxy sends itself (RFC 9110 §15).
enum ReasonPhrase {
    static func `for`(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 400: "Bad Request"
        case 403: "Forbidden"
        case 408: "Request Timeout"
        case 414: "URI Too Long"
        case 431: "Request Header Fields Too Large"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Error"
        }
    }
}
