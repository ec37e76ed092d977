/// How stripped metadata leaves the file.
public enum StripMode: String, Sendable, Hashable {
    /// Neutralised in place: the file keeps its length (a declared Content-Length survives).
    case blank
    /// Cut out: the file gets shorter (buffer routes only). HEIC is always blanked: its item
    /// locations are file offsets, so cutting bytes out would move every image item.
    case remove
}

/// What `strip_metadata` removes and keeps.
public struct StripOptions: Sendable, Hashable {
    /// The formats stripped; a file of another format passes through untouched.
    public var formats: Set<ImageFormat>
    public var mode: StripMode
    /// Keep the EXIF Orientation tag (all other EXIF goes). Applies to JPEG and WebP; a HEIC
    /// image's orientation is its `irot`/`imir` properties, which are always kept.
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
