/// The `Content-Type` of a `respond` rule's file from its extension, when the rule names none: the
/// common web types (as nginx's `mime.types` maps them), else `application/octet-stream`.
enum MediaType {
    static func forFile(named name: String) -> String {
        guard let dot = name.lastIndex(of: "."), !name[dot...].contains("/") else { return fallback }
        return byExtension[name[name.index(after: dot)...].lowercased()] ?? fallback
    }

    static let fallback = "application/octet-stream"

    private static let byExtension: [String: String] = [
        "html": "text/html; charset=utf-8", "htm": "text/html; charset=utf-8",
        "css": "text/css; charset=utf-8", "js": "text/javascript; charset=utf-8",
        "mjs": "text/javascript; charset=utf-8", "json": "application/json", "map": "application/json",
        "txt": "text/plain; charset=utf-8", "xml": "application/xml", "csv": "text/csv; charset=utf-8",
        "png": "image/png", "jpg": "image/jpeg", "jpeg": "image/jpeg", "gif": "image/gif",
        "webp": "image/webp", "avif": "image/avif", "svg": "image/svg+xml", "ico": "image/x-icon",
        "woff": "font/woff", "woff2": "font/woff2", "ttf": "font/ttf", "otf": "font/otf",
        "wasm": "application/wasm", "pdf": "application/pdf", "zip": "application/zip",
        "mp4": "video/mp4", "webm": "video/webm", "mp3": "audio/mpeg", "ogg": "audio/ogg",
    ]
}
