import DataFiles
import Foundation
import Testing

@testable import Models

/// The file type bits of `path` without following a last symbolic link.
private func fileType(_ path: String) -> mode_t {
    var status = stat()
    return lstat(path, &status) == 0 ? status.st_mode & S_IFMT : 0
}

private func mode(_ path: String) -> mode_t {
    var status = stat()
    return stat(path, &status) == 0 ? status.st_mode & 0o7777 : 0
}

private func contents(_ path: String) -> String? {
    (try? Data(contentsOf: URL(fileURLWithPath: path))).map { String(decoding: $0, as: UTF8.self) }
}

/// The process's umask, read without changing it (other tests run at the same time).
private func currentUmask() throws -> mode_t {
    let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
    let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("Umask:") })
    return try #require(mode_t(line.dropFirst("Umask:".count).trimmingCharacters(in: .whitespaces), radix: 8))
}

@Suite("AtomicFile: writes that never destroy what is at the path")
struct AtomicFileTests {
    /// This test's folder, removed after it.
    let files = TestFiles("atomic-tests")
    let folder: String

    init() throws {
        folder = files.folder.path
    }

    func path(_ name: String) -> String { folder + "/" + name }

    func write(_ text: String, to name: String, specialFiles: AtomicFile.SpecialFiles = .writeInto) throws(AtomicFile.WriteError) {
        try AtomicFile.write(Array(text.utf8), to: URL(fileURLWithPath: path(name)), specialFiles: specialFiles)
    }

    @Test func piecesMakeOneFileAndAFailureHalfwayLeavesTheOldOne() throws {
        try write("old\n", to: "pieces.csv")
        let url = URL(fileURLWithPath: path("pieces.csv"))
        try AtomicFile.write(to: url) { emit throws(AtomicFile.WriteError) in
            for piece in ["a,b\n", "1,2\n", "", "3,4\n"] { try emit(Array(piece.utf8)) }
        }
        #expect(contents(path("pieces.csv")) == "a,b\n1,2\n3,4\n")
        // A piece's maker fails after some pieces were written: the file is the one before, and no temporary file
        // is left beside it.
        let stop = AtomicFile.WriteError(path: url.path, reason: "stopped")
        #expect(throws: stop) {
            try AtomicFile.write(to: url) { emit throws(AtomicFile.WriteError) in
                try emit(Array("x,y\n".utf8))
                throw stop
            }
        }
        #expect(contents(path("pieces.csv")) == "a,b\n1,2\n3,4\n")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.contains("partial") }.isEmpty)
    }

    @Test func aChainOfSymbolicLinksIsFollowedAndTheLinksStay() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: path("real"), withIntermediateDirectories: true)
        try "old".write(toFile: path("real/file.svg"), atomically: false, encoding: .utf8)
        #expect(symlink("real/file.svg", path("second")) == 0)
        #expect(symlink(path("second"), path("first")) == 0)
        try write("new", to: "first")
        #expect(fileType(path("first")) == S_IFLNK && fileType(path("second")) == S_IFLNK, "both links are still links")
        #expect(contents(path("real/file.svg")) == "new")
        let leftovers =
            try FileManager.default.contentsOfDirectory(atPath: folder).sorted() + FileManager.default.contentsOfDirectory(atPath: path("real"))
        #expect(leftovers == ["first", "real", "second", "file.svg"], "no temporary file left beside either")
    }

    @Test func aDanglingLinkCreatesTheFileItNames() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(symlink("target.svg", path("link")) == 0)
        try write("made", to: "link")
        #expect(fileType(path("link")) == S_IFLNK)
        #expect(contents(path("target.svg")) == "made")
        #expect(symlink("missing/target.svg", path("deep")) == 0)
        #expect(
            throws: AtomicFile.WriteError(
                path: path("deep"),
                reason: "the folder \(folder)/missing does not exist "
                    + "(\(path("deep")) is a symbolic link to \(folder)/missing/target.svg)")
        ) {
            try write("x", to: "deep")
        }
    }

    @Test func aLoopOfLinksIsAnErrorAndChangesNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(symlink("b", path("a")) == 0)
        #expect(symlink("a", path("b")) == 0)
        #expect(
            throws: AtomicFile.WriteError(
                path: path("a"),
                reason: "a loop of symbolic links (or a chain of more than 40); "
                    + "point the link at a file, or remove it")
        ) { try write("x", to: "a") }
        #expect(fileType(path("a")) == S_IFLNK && fileType(path("b")) == S_IFLNK)
    }

    @Test func aFIFOIsWrittenIntoOrRefusedNeverReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(path("pipe"), 0o600) == 0)
        let reader = open(path("pipe"), O_RDONLY | O_NONBLOCK)
        #expect(reader >= 0)
        defer { close(reader) }
        try write("through the pipe", to: "pipe")
        var buffer = [UInt8](repeating: 0, count: 64)
        let count = read(reader, &buffer, buffer.count)
        #expect(String(decoding: buffer.prefix(max(0, count)), as: UTF8.self) == "through the pipe")
        #expect(fileType(path("pipe")) == S_IFIFO)
        #expect(
            throws: AtomicFile.WriteError(
                path: path("pipe"),
                reason: "it is a FIFO, not a regular file; this output is written "
                    + "only to regular files, and the FIFO was left as it was")
        ) {
            try write("x", to: "pipe", specialFiles: .refuse)
        }
        #expect(fileType(path("pipe")) == S_IFIFO)
    }

    @Test(.enabled(if: geteuid() == 0, "mknod needs root"))
    func aCharacterDeviceIsWrittenIntoOrRefusedNeverReplaced() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mknod(path("null"), S_IFCHR | 0o666, deviceNumber(major: 1, minor: 3)) == 0, "a private /dev/null")
        try write("discarded", to: "null")
        #expect(fileType(path("null")) == S_IFCHR)
        #expect(throws: AtomicFile.WriteError.self) { try write("x", to: "null", specialFiles: .refuse) }
        #expect(fileType(path("null")) == S_IFCHR)
        #expect(mknod(path("full"), S_IFCHR | 0o666, deviceNumber(major: 1, minor: 7)) == 0, "a private /dev/full")
        #expect(throws: AtomicFile.WriteError(path: path("full"), reason: String(cString: strerror(ENOSPC)))) { try write("x", to: "full") }
        #expect(fileType(path("full")) == S_IFCHR)
    }

    @Test func aDirectoryOrASocketIsAnErrorNamingIt() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.createDirectory(atPath: path("dir.svg"), withIntermediateDirectories: true)
        #expect(throws: AtomicFile.WriteError(path: path("dir.svg"), reason: "it is a directory; nothing was written")) {
            try write("x", to: "dir.svg")
        }
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let name = Array(path("sock").utf8CString)
        try #require(name.count <= MemoryLayout.size(ofValue: address.sun_path))
        withUnsafeMutableBytes(of: &address.sun_path) { raw in name.withUnsafeBytes { raw.copyMemory(from: $0) } }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(bound == 0)
        #expect(throws: AtomicFile.WriteError(path: path("sock"), reason: "it is a socket; nothing was written")) { try write("x", to: "sock") }
        #expect(fileType(path("sock")) == S_IFSOCK)
    }

    @Test func anExistingFileKeepsItsPermissionsAndANewOneGetsTheUmasksMode() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for kept: mode_t in [0o600, 0o640, 0o444] {
            let name = "kept-\(String(kept, radix: 8))"
            try "old".write(toFile: path(name), atomically: false, encoding: .utf8)
            #expect(chmod(path(name), kept) == 0)
            try write("new", to: name)
            #expect(mode(path(name)) == kept, "mode \(String(mode(path(name)), radix: 8)), expected \(String(kept, radix: 8))")
            #expect(contents(path(name)) == "new")
        }
        try write("fresh", to: "new")
        #expect(mode(path("new")) == 0o666 & ~(try currentUmask()), "as shell redirection creates it")
    }

    @Test func theStagedTemporaryFileIsNoMoreOpenThanItsTarget() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "secret".write(toFile: path("private"), atomically: false, encoding: .utf8)
        #expect(chmod(path("private"), 0o600) == 0)
        let staged = try AtomicFile.stage(Array("new secret".utf8), to: URL(fileURLWithPath: path("private")))
        let temporary = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix(".private.partial-") })
        #expect(mode(path(temporary)) == 0o600)
        #expect(contents(path("private")) == "secret", "nothing changes before the commit")
        try staged.commit()
        #expect(contents(path("private")) == "new secret")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["private"])
    }

    @Test(.enabled(if: geteuid() == 0, "chown needs root"))
    func asRootTheOwnerAndGroupAreKept() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "old".write(toFile: path("theirs"), atomically: false, encoding: .utf8)
        #expect(chown(path("theirs"), 4321, 4321) == 0)
        try write("new", to: "theirs")
        var status = stat()
        #expect(stat(path("theirs"), &status) == 0)
        #expect(status.st_uid == 4321 && status.st_gid == 4321)
    }

    @Test func aHardLinkedFileIsReplacedAndItsOtherNameKeepsTheOldContent() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "old".write(toFile: path("one"), atomically: false, encoding: .utf8)
        #expect(link(path("one"), path("two")) == 0)
        try write("new", to: "one")
        #expect(contents(path("one")) == "new")
        #expect(contents(path("two")) == "old", "as after rename: the other name is another file now")
    }

    @Test func checkWritableRefusesWhatStageWouldRefuseAndWritesNothing() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        #expect(mkfifo(path("pipe"), 0o600) == 0)
        try FileManager.default.createDirectory(atPath: path("dir"), withIntermediateDirectories: true)
        #expect(throws: AtomicFile.WriteError.self) { try AtomicFile.checkWritable(URL(fileURLWithPath: path("pipe"))) }
        #expect(throws: AtomicFile.WriteError.self) { try AtomicFile.checkWritable(URL(fileURLWithPath: path("dir"))) }
        #expect(throws: AtomicFile.WriteError.self) { try AtomicFile.stage([1], to: URL(fileURLWithPath: path("pipe"))) }
        try AtomicFile.checkWritable(URL(fileURLWithPath: path("new")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["dir", "pipe"])
    }

    /// An output that is one of the inputs by any name — the same path, `./x`, a symbolic link (or a chain of
    /// them), a hard link — is refused naming that input, and nothing changes; an output that does not exist yet,
    /// another file, `-`, a missing input and a device are not (issue 31).
    @Test func checkNotAnyOfRefusesAnOutputThatIsAnInput() throws {
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try "model".write(toFile: path("model.onnx"), atomically: false, encoding: .utf8)
        try "other".write(toFile: path("other.onnx"), atomically: false, encoding: .utf8)
        #expect(symlink("model.onnx", path("second")) == 0)
        #expect(symlink(path("second"), path("link")) == 0)
        #expect(link(path("model.onnx"), path("hard")) == 0)
        let inputs = ["-", path("missing.csv"), path("other.onnx"), path("model.onnx")]
        for output in [path("model.onnx"), folder + "/./model.onnx", path("link"), path("hard")] {
            do {
                try AtomicFile.checkNotAnyOf(inputs, output: URL(fileURLWithPath: output))
                Issue.record("\(output) was not refused")
            } catch {
                #expect(error.input == path("model.onnx"))
                #expect(error.path == output)
                #expect(error.reason.hasPrefix("the output is the input \(path("model.onnx")) (the same file"), "\(error.reason)")
            }
        }
        do {
            try AtomicFile.checkNotAnyOf(inputs, output: URL(fileURLWithPath: path("link")))
        } catch {
            #expect(error.reason.contains("(the same file: \(path("link")) is a symbolic link to \(path("model.onnx")))"), "\(error.reason)")
        }
        for output in [path("new.weights"), path("other.weights"), "/dev/null"] {
            try AtomicFile.checkNotAnyOf(inputs, output: URL(fileURLWithPath: output))
        }
        try AtomicFile.checkNotAnyOf(["/dev/null"], output: URL(fileURLWithPath: "/dev/null"))
        #expect(contents(path("model.onnx")) == "model")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).sorted() == ["hard", "link", "model.onnx", "other.onnx", "second"])
    }
}

/// Linux's device number for a small major and minor (glibc's `makedev` is a macro Swift cannot see).
private func deviceNumber(major: UInt64, minor: UInt64) -> dev_t {
    dev_t((major & 0xfff) << 8 | (minor & 0xff))
}
