public import HTTPCore

/// An image format whose metadata `MetadataStripper` neutralises; decided by the sniffed
/// media type, never by the file's name.
public enum ImageFormat: String, Sendable, CaseIterable, Hashable {
    case jpeg, png, webp, heic

    /// The format of a sniffed media type (`image/jpeg`, `image/png`, `image/webp`,
    /// `image/heic`, `image/heif` and their sequences), or nil.
    public init?(mediaType: String) {
        switch mediaType {
        case "image/jpeg", "image/pjpeg": self = .jpeg
        case "image/png": self = .png
        case "image/webp": self = .webp
        case "image/heic", "image/heif", "image/heic-sequence", "image/heif-sequence", "image/avif":
            self = .heic
        default: return nil
        }
    }
}

/// How stripped metadata leaves the file.
public enum StripMode: String, Sendable, Hashable {
    /// Neutralised in place: the file keeps its length (a declared Content-Length survives).
    case blank
    /// Cut out: the file gets shorter (buffer routes only).
    case remove
}

/// What `strip_metadata` removes and keeps.
public struct StripOptions: Sendable, Hashable {
    public var formats: Set<ImageFormat>
    public var mode: StripMode
    /// Keep the EXIF Orientation tag (all other EXIF goes).
    public var keepOrientation: Bool
    /// Keep ICC colour profiles.
    public var keepICC: Bool

    public init(
        formats: Set<ImageFormat> = Set(ImageFormat.allCases), mode: StripMode = .blank,
        keepOrientation: Bool = false, keepICC: Bool = true
    ) {
        self.formats = formats
        self.mode = mode
        self.keepOrientation = keepOrientation
        self.keepICC = keepICC
    }
}

/// Strips metadata from one image file as its bytes stream by (to be implemented).
public struct MetadataStripper: Sendable {
    public init(format: ImageFormat, options: StripOptions) {}

    public mutating func write<Sink: ByteSink>(_ input: UnsafeRawBufferPointer, into sink: inout Sink) {
        sink.write(input)
    }

    public mutating func finish<Sink: ByteSink>(into sink: inout Sink) {}

    public var stripped: [String] { [] }
}
