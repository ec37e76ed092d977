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
