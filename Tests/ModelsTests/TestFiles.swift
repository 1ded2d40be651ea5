import Foundation

/// A folder for the files one test writes, removed when the test's suite instance goes (each test has its own):
/// tests leave nothing behind in the temporary directory.
final class TestFiles: Sendable {
    let folder: URL

    init(_ prefix: String) {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: folder) }

    /// Writes `text` to a new file in the folder; returns its path.
    func write(_ text: String, extension suffix: String = "csv") throws -> String {
        let url = folder.appendingPathComponent("\(UUID().uuidString).\(suffix)")
        try Data(text.utf8).write(to: url)
        return url.path
    }
}
