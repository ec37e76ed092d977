/// The admin's live upload page (placeholder until the page lands).
enum AdminPage {
    static let html = "<!doctype html><title>FormGate</title><p>FormGate admin</p>\n"
}
