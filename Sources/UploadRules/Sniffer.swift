import CMagic

/// Finds the real type of file content from its first bytes: a built-in table of the
/// WHATWG MIME Sniffing signatures (and executables) first, then libmagic.
///
/// One `Sniffer` per worker thread (libmagic's handle is not thread-safe).
public final class Sniffer: @unchecked Sendable {
    private var cookie: OpaquePointer?

    /// Creates a sniffer; libmagic's database is loaded on first use.
    public init() {}

    deinit {
        if let cookie { magic_close(cookie) }
    }

    /// The media type of content beginning with `bytes` (`type/subtype`, lower case).
    public func sniff(_ bytes: [UInt8]) -> String {
        if let known = Self.signature(bytes) { return known }
        if bytes.isEmpty { return "application/x-empty" }
        if cookie == nil {
            cookie = magic_open(MAGIC_MIME_TYPE | MAGIC_ERROR)
            if let cookie, magic_load(cookie, nil) != 0 {
                magic_close(cookie)
                self.cookie = nil
            }
        }
        guard let cookie else { return "application/octet-stream" }
        let result = bytes.withUnsafeBytes { magic_buffer(cookie, $0.baseAddress, $0.count) }
        guard let result else { return "application/octet-stream" }
        return String(cString: result).lowercased()
    }

    /// The built-in table: byte patterns at offset 0 (or RIFF/ftyp forms).
    static func signature(_ bytes: [UInt8]) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            bytes.count >= offset + prefix.count && Array(bytes[offset..<(offset + prefix.count)]) == prefix
        }
        func ascii(_ text: String) -> [UInt8] { Array(text.utf8) }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return "image/png" }
        if starts([0xFF, 0xD8, 0xFF]) { return "image/jpeg" }
        if starts(ascii("GIF87a")) || starts(ascii("GIF89a")) { return "image/gif" }
        if starts(ascii("RIFF")) && starts(ascii("WEBPVP"), at: 8) { return "image/webp" }
        if starts(ascii("RIFF")) && starts(ascii("WAVE"), at: 8) { return "audio/wav" }
        if starts(ascii("RIFF")) && starts(ascii("AVI "), at: 8) { return "video/x-msvideo" }
        if starts(ascii("BM")) && bytes.count >= 14 { return "image/bmp" }
        if starts([0x00, 0x00, 0x01, 0x00]) || starts([0x00, 0x00, 0x02, 0x00]) { return "image/x-icon" }
        if starts(ascii("%PDF-")) { return "application/pdf" }
        if starts([0x50, 0x4B, 0x03, 0x04]) { return "application/zip" }
        if starts([0x1F, 0x8B, 0x08]) { return "application/gzip" }
        if starts(ascii("Rar!\u{1A}\u{07}")) { return "application/x-rar-compressed" }
        if starts([0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]) { return "application/x-7z-compressed" }
        if starts(ascii("ID3")) { return "audio/mpeg" }
        if starts(ascii("OggS\u{0}")) { return "application/ogg" }
        if starts(ascii("fLaC")) { return "audio/flac" }
        if starts([0x1A, 0x45, 0xDF, 0xA3]) { return "video/webm" }
        if starts(ascii("ftyp"), at: 4) {
            if starts(ascii("ftypqt"), at: 4) { return "video/quicktime" }
            if starts(ascii("ftypheic"), at: 4) || starts(ascii("ftypheix"), at: 4) { return "image/heic" }
            if starts(ascii("ftypavif"), at: 4) { return "image/avif" }
            return "video/mp4"
        }
        if starts(ascii("wOFF")) { return "font/woff" }
        if starts(ascii("wOF2")) { return "font/woff2" }
        if starts([0x00, 0x01, 0x00, 0x00]) { return "font/ttf" }
        if starts(ascii("OTTO")) { return "font/otf" }
        if starts([0x7F, 0x45, 0x4C, 0x46]) { return "application/x-executable" }
        if starts(ascii("MZ")) { return "application/x-msdownload" }
        if starts([0xCA, 0xFE, 0xBA, 0xBE]) || starts([0xCF, 0xFA, 0xED, 0xFE])
            || starts([0xCE, 0xFA, 0xED, 0xFE])
        {
            return "application/x-mach-binary"
        }
        if starts(ascii("#!")) { return "text/x-shellscript" }
        return nil
    }

    /// The usual extension (with its dot) for a media type, for `{ext}` after sniffing.
    public static func fileExtension(for type: String) -> String? {
        extensions[type]
    }

    /// Built once (a dictionary literal inside the function was built on every call).
    private static let extensions: [String: String] = [
        "image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp",
        "image/bmp": ".bmp",
        "image/x-icon": ".ico", "image/heic": ".heic", "image/avif": ".avif", "image/svg+xml": ".svg",
        "image/tiff": ".tiff", "application/pdf": ".pdf", "application/zip": ".zip",
        "application/gzip": ".gz",
        "application/x-rar-compressed": ".rar", "application/x-7z-compressed": ".7z",
        "audio/mpeg": ".mp3",
        "audio/wav": ".wav", "audio/flac": ".flac", "application/ogg": ".ogg", "video/mp4": ".mp4",
        "video/webm": ".webm", "video/quicktime": ".mov", "video/x-msvideo": ".avi", "font/woff": ".woff",
        "font/woff2": ".woff2", "font/ttf": ".ttf", "font/otf": ".otf", "text/plain": ".txt",
        "text/html": ".html",
        "application/json": ".json", "text/csv": ".csv", "application/x-executable": ".bin",
        "application/x-msdownload": ".exe",
    ]
}
