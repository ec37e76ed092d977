import CMagic

#if canImport(Glibc)
    import Glibc
#endif

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
        bytes.withUnsafeBytes { sniff($0) }
    }

    /// `sniff(_:)` over borrowed bytes (a file's first bytes where they were read: no copy).
    public func sniff(_ bytes: UnsafeRawBufferPointer) -> String {
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
        let result = magic_buffer(cookie, bytes.baseAddress, bytes.count)
        guard let result else { return "application/octet-stream" }
        return String(cString: result).lowercased()
    }

    /// The built-in table: byte patterns at offset 0 (or RIFF/ftyp forms).
    static func signature(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { signature($0) }
    }

    /// `signature(_:)` over borrowed bytes: the patterns are compared in place.
    static func signature(_ bytes: UnsafeRawBufferPointer) -> String? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            guard bytes.count >= offset + prefix.count, let base = bytes.baseAddress else { return false }
            return prefix.withUnsafeBytes { memcmp(base + offset, $0.baseAddress!, prefix.count) == 0 }
        }
        let p = Patterns.self
        if starts(p.png) { return "image/png" }
        if starts(p.jpeg) { return "image/jpeg" }
        if starts(p.gif87) || starts(p.gif89) { return "image/gif" }
        if starts(p.riff) {
            if starts(p.webp, at: 8) { return "image/webp" }
            if starts(p.wave, at: 8) { return "audio/wav" }
            if starts(p.avi, at: 8) { return "video/x-msvideo" }
        }
        if starts(p.bmp) && bytes.count >= 14 { return "image/bmp" }
        if starts(p.icon) || starts(p.cursor) { return "image/x-icon" }
        if starts(p.pdf) { return "application/pdf" }
        if starts(p.zip) { return "application/zip" }
        if starts(p.gzip) { return "application/gzip" }
        if starts(p.rar) { return "application/x-rar-compressed" }
        if starts(p.sevenZip) { return "application/x-7z-compressed" }
        if starts(p.id3) { return "audio/mpeg" }
        if starts(p.ogg) { return "application/ogg" }
        if starts(p.flac) { return "audio/flac" }
        if starts(p.webm) { return "video/webm" }
        if starts(p.ftyp, at: 4) {
            if starts(p.quicktime, at: 4) { return "video/quicktime" }
            if starts(p.heic, at: 4) || starts(p.heix, at: 4) { return "image/heic" }
            if starts(p.avif, at: 4) { return "image/avif" }
            return "video/mp4"
        }
        if starts(p.woff) { return "font/woff" }
        if starts(p.woff2) { return "font/woff2" }
        if starts(p.ttf) { return "font/ttf" }
        if starts(p.otf) { return "font/otf" }
        if starts(p.elf) { return "application/x-executable" }
        if starts(p.mz) { return "application/x-msdownload" }
        if starts(p.machO) || starts(p.machO64) || starts(p.machO32) { return "application/x-mach-binary" }
        if starts(p.shebang) { return "text/x-shellscript" }
        return nil
    }

    /// The signatures' bytes, built once.
    private enum Patterns {
        static let png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        static let jpeg: [UInt8] = [0xFF, 0xD8, 0xFF]
        static let gif87 = Array("GIF87a".utf8)
        static let gif89 = Array("GIF89a".utf8)
        static let riff = Array("RIFF".utf8)
        static let webp = Array("WEBPVP".utf8)
        static let wave = Array("WAVE".utf8)
        static let avi = Array("AVI ".utf8)
        static let bmp = Array("BM".utf8)
        static let icon: [UInt8] = [0x00, 0x00, 0x01, 0x00]
        static let cursor: [UInt8] = [0x00, 0x00, 0x02, 0x00]
        static let pdf = Array("%PDF-".utf8)
        static let zip: [UInt8] = [0x50, 0x4B, 0x03, 0x04]
        static let gzip: [UInt8] = [0x1F, 0x8B, 0x08]
        static let rar = Array("Rar!\u{1A}\u{07}".utf8)
        static let sevenZip: [UInt8] = [0x37, 0x7A, 0xBC, 0xAF, 0x27, 0x1C]
        static let id3 = Array("ID3".utf8)
        static let ogg = Array("OggS\u{0}".utf8)
        static let flac = Array("fLaC".utf8)
        static let webm: [UInt8] = [0x1A, 0x45, 0xDF, 0xA3]
        static let ftyp = Array("ftyp".utf8)
        static let quicktime = Array("ftypqt".utf8)
        static let heic = Array("ftypheic".utf8)
        static let heix = Array("ftypheix".utf8)
        static let avif = Array("ftypavif".utf8)
        static let woff = Array("wOFF".utf8)
        static let woff2 = Array("wOF2".utf8)
        static let ttf: [UInt8] = [0x00, 0x01, 0x00, 0x00]
        static let otf = Array("OTTO".utf8)
        static let elf: [UInt8] = [0x7F, 0x45, 0x4C, 0x46]
        static let mz = Array("MZ".utf8)
        static let machO: [UInt8] = [0xCA, 0xFE, 0xBA, 0xBE]
        static let machO64: [UInt8] = [0xCF, 0xFA, 0xED, 0xFE]
        static let machO32: [UInt8] = [0xCE, 0xFA, 0xED, 0xFE]
        static let shebang = Array("#!".utf8)
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
