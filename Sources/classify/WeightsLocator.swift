import DataFiles
import Foundation
import Models
import Train
import WeightsFormat

// The command line's weights lookup: `--weights FILE`, `$CLASSIFY_WEIGHTS`, `./Weights`, the installed folder, then
// the copy built into the binary. It is the CLI's, not the library's: an app loads the built-in weights
// (`ShapeRecognizer.shipped()`) or names its own (`init(contentsOf:)`, any `WeightsSource`).

/// The files of one model in one folder come from different training runs (an export interrupted between its
/// renames, or two runs that wrote the same prefix): a permanent failure naming both files and what to do.
package struct MixedWeightsSet: Error, CustomStringConvertible, Sendable, Equatable {
    /// The file that was to be loaded.
    package let file: String
    /// Its recorded run (`nil`: none recorded).
    package let run: String?
    /// A file beside it from another run.
    package let other: String
    /// That file's recorded run.
    package let otherRun: String?
    /// The set's prefix, for `classify train --out`.
    package let prefix: String

    package var description: String {
        "\(file) (run \(run ?? "not recorded")) and \(other) (run \(otherRun ?? "not recorded")) are from different "
            + "training runs — an export was interrupted or another run wrote one of them — so they are not used together; "
            + "run `classify train … --out \(prefix)` again to write the whole set, or remove the files of the other run"
    }
}

/// Where a weights variant is read from.
package enum WeightsLocation: Equatable, Sendable {
    /// A file: its path, and how it was found (`--weights`, `$CLASSIFY_WEIGHTS`, `./Weights`, `shipped`).
    case file(path: String, origin: String)
    /// The copy built into the library (`ShippedWeights`).
    case builtIn
}

/// The weights files of `classify`, looked for by folder, in order:
/// 1. `--weights FILE`: that file only, for every variant (no set check);
/// 2. the folder in the environment variable `CLASSIFY_WEIGHTS` — when set, it must be an existing folder: a
///    missing path or a file there is a `DataError` (missing file, exit 66), not a reason to look elsewhere;
/// 3. `Weights/` in the current directory;
/// 4. the shipped location: the installed `share/classify/Weights/` beside the binary, or the `Weights/` folder of
///    the package the tool was built from;
/// 5. the weights built into the library.
///
/// The first folder that holds any variant of the model (`MODEL.VARIANT.weights`, e.g. `shape-classifier.f32`
/// for `shape-classifier.int8`) serves every variant of it: a variant missing there is `WeightsNotFound`, never
/// filled from a later folder, so one answer never mixes files of two folders. A file that is there but broken is
/// an error of its link, not a reason to look further (it would hide the problem).
///
/// The files of the model in the serving folder must be one set: when any of them (weights variants, and the
/// curves `MODEL.curves.svg`) records a training run (`TrainingMetadata.run`, the curves'
/// `data-training-run`), they must all record the same one, or loading is `MixedWeightsSet` (permanent: the
/// chain moves on to its non-ML link). Files that record none were written before runs were recorded and are
/// accepted together.
package struct WeightsLocator: WeightsSource {
    /// The explicit file (`--weights`), if any.
    package let explicitFile: String?
    /// The folders, in order, each with how it was found (for error messages).
    package let folders: [(origin: String, path: String?)]
    /// Where to look last, when no folder holds any variant of a model: the weights built into the library
    /// (`ShippedWeights`), or `nil` to look in the folders only.
    package let builtIn: ShippedWeights?

    /// The environment variable naming a weights folder.
    package static let environmentVariable = "CLASSIFY_WEIGHTS"

    /// Creates the locator; `shippedFolder` is the package's `Weights/` as built.
    /// With `builtIn`, a model no folder holds is loaded from the weights built into the library.
    /// With `environmentFolderOnly` and `$CLASSIFY_WEIGHTS` set, that folder is the only place looked in (the
    /// user named it: a model missing there is `WeightsNotFound`, not a reason to use another).
    package init(
        explicitFile: String?, environment: [String: String] = ProcessInfo.processInfo.environment,
        currentDirectory: String = FileManager.default.currentDirectoryPath, shippedFolder: String?,
        builtIn: ShippedWeights? = nil, environmentFolderOnly: Bool = false
    ) {
        self.explicitFile = explicitFile
        let fromEnvironment = Self.environmentFolder(environment)
        var folders: [(String, String?)] = [("$\(Self.environmentVariable)", fromEnvironment)]
        if environmentFolderOnly && fromEnvironment != nil {
            self.builtIn = nil
        } else {
            self.builtIn = builtIn
            folders.append(("./Weights", URL(fileURLWithPath: currentDirectory).appendingPathComponent("Weights").path))
            if let shippedFolder, shippedFolder != folders[1].1 { folders.append(("shipped", shippedFolder)) }
        }
        self.folders = folders
    }

    /// The folder `$CLASSIFY_WEIGHTS` names in `environment`, or `nil` when it is unset or empty.
    package static func environmentFolder(_ environment: [String: String]) -> String? {
        environment[environmentVariable].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Loads `variant` from the first folder that holds any variant of its model, after checking that the
    /// model's files there are one set; no such folder is `WeightsNotFound` listing every place.
    package func load(_ variant: String) throws -> ModelFile {
        switch try locate(variant) {
        case let .file(path, _): return try ModelFile(contentsOf: URL(fileURLWithPath: path))
        case .builtIn: return try (builtIn ?? ShippedWeights()).load(Self.builtInVariant(variant) ?? variant)
        }
    }

    /// Where `load` reads `variant` from: the `--weights` file, the file in the first folder that holds any variant
    /// of its model (after checking that the model's files there are one set), or the built-in copy; no such place
    /// is `WeightsNotFound` listing every place looked.
    package func locate(_ variant: String) throws -> WeightsLocation {
        if let explicitFile { return .file(path: explicitFile, origin: "--weights") }
        if let builtInVariant = Self.builtInVariant(variant) {
            guard builtIn != nil, ShippedWeights.bytes(of: builtInVariant) != nil else {
                throw WeightsNotFound(variant: builtInVariant, places: ["built in (\(ShippedWeights.variants.joined(separator: ", ")))"])
            }
            return .builtIn
        }
        let model = variant.contains(".") ? String(variant[..<(variant.lastIndex(of: ".") ?? variant.endIndex)]) : variant
        let fileName = "\(variant).weights"
        var places: [String] = [], unlistable = false
        for (origin, folder) in folders {
            guard let folder else {
                places.append("\(origin) (not set)")
                continue
            }
            let listed = Result { () throws(DataError) in try contents(of: folder, origin: origin) }
            if case let .failure(error) = listed, origin != "$\(Self.environmentVariable)" {
                // Looked past, as a folder without the model is, but said: a later folder may serve; if none does,
                // the built-in copy is not taken in silence (the chain warns, then tries its built-in links).
                places.append("\(folder) — \(error.message)")
                unlistable = true
                continue
            }
            let names = try listed.get()
            let own = names.filter { Self.isVariant($0, of: model) || $0 == fileName }.sorted()
            guard !own.isEmpty else {
                places.append(origin == "./Weights" || origin == "shipped" ? "\(folder)/\(fileName)" : "\(origin) (\(folder)/\(fileName))")
                continue
            }
            let path = URL(fileURLWithPath: folder).appendingPathComponent(fileName).path
            guard own.contains(fileName) else {
                throw WeightsNotFound(
                    variant: variant,
                    places: places + [
                        "\(path) — not there, and \(origin) holds \(own.joined(separator: ", ")), so it serves every variant "
                            + "of \(model) and later folders are not searched"
                    ])
            }
            try checkOneSet(path, siblings: own.filter { $0 != fileName }, folder: folder, model: model)
            return .file(path: path, origin: origin)
        }
        if builtIn != nil && !unlistable {
            guard ShippedWeights.bytes(of: variant) != nil else {
                throw WeightsNotFound(variant: variant, places: places + ["built in (\(ShippedWeights.variants.joined(separator: ", ")))"])
            }
            return .builtIn
        }
        throw WeightsNotFound(variant: variant, places: places)
    }

    /// Checks, before any model is tried, that `$CLASSIFY_WEIGHTS` (when set and no `--weights` is given) names an
    /// existing folder: the user's mistake is then one error, not a failed attempt of every link.
    package func checkEnvironmentFolder() throws(DataError) {
        guard explicitFile == nil, let (origin, folder) = folders.first, let folder else { return }
        _ = try contents(of: folder, origin: origin)
    }

    /// The link name that loads `variant` from the weights built in, whatever the folders hold: the chain's last
    /// weights links after the folders' (an installed file that is corrupt falls back to the same model built in,
    /// not to the rule).
    package static func builtIn(_ variant: String) -> String { builtInPrefix + variant }
    /// `variant` of a `builtIn(_:)` link name, or `nil`.
    package static func builtInVariant(_ name: String) -> String? {
        name.hasPrefix(builtInPrefix) ? String(name.dropFirst(builtInPrefix.count)) : nil
    }
    static let builtInPrefix = "built-in:"

    /// The names in `folder`; for `$CLASSIFY_WEIGHTS`, a missing folder or a file is an error, for the other
    /// places it holds nothing when it is not there, and a folder that cannot be listed (no permission) is an error
    /// (silently passing over it hid the weights the user put there).
    func contents(of folder: String, origin: String) throws(DataError) -> [String] {
        var status = stat()
        let found = stat(folder, &status) == 0
        let isFolder = found && (status.st_mode & S_IFMT) == S_IFDIR
        guard origin == "$\(Self.environmentVariable)" else {
            guard isFolder else { return [] }
            do {
                return try FileManager.default.contentsOfDirectory(atPath: folder)
            } catch {
                throw DataError(file: folder, message: "cannot list the \(origin) weights folder: \(error.localizedDescription)", kind: .unreadable)
            }
        }
        guard isFolder else {
            throw DataError(
                file: folder,
                message: (found ? "is not a folder" : "does not exist")
                    + "; $\(Self.environmentVariable) names the folder weights files are looked for in (use --weights for one file), "
                    + "so set it to an existing folder or unset it", kind: .missingFile)
        }
        do {
            return try FileManager.default.contentsOfDirectory(atPath: folder)
        } catch {
            throw DataError(
                file: folder, message: "cannot list the folder $\(Self.environmentVariable) names: \(error.localizedDescription)",
                kind: .unreadable)
        }
    }

    /// Whether `name` is `MODEL.VARIANT.weights` (one dot-free component between).
    static func isVariant(_ name: String, of model: String) -> Bool {
        guard name.hasPrefix(model + "."), name.hasSuffix(".weights") else { return false }
        let middle = name.dropFirst(model.count + 1).dropLast(".weights".count)
        return !middle.isEmpty && !middle.contains(".")
    }

    /// Throws `MixedWeightsSet` when `path` and its `siblings` (and the model's curves) record different runs.
    /// A file whose run cannot be read (missing, not a regular file, corrupt) is left to its own link.
    func checkOneSet(_ path: String, siblings: [String], folder: String, model: String) throws(MixedWeightsSet) {
        guard let run = recordedRun(ofWeights: path) else { return }
        let folderURL = URL(fileURLWithPath: folder)
        var others = siblings.map { folderURL.appendingPathComponent($0).path }.compactMap { other in
            recordedRun(ofWeights: other).map { (other, $0) }
        }
        let curves = folderURL.appendingPathComponent("\(model).curves.svg").path
        if let curvesRun = recordedRun(ofCurves: curves) { others.append((curves, curvesRun)) }
        if let (other, otherRun) = others.first(where: { $0.1 != run }) {
            throw MixedWeightsSet(
                file: path, run: run, other: other, otherRun: otherRun,
                prefix: folderURL.appendingPathComponent(model).path)
        }
    }
}

/// The bytes of the regular file at `path`, at most `limit` of them from the start; `nil` when it is not a
/// regular file or cannot be read.
func leadingBytes(of path: String, limit: Int) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var status = stat()
    guard fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { return nil }
    var bytes = [UInt8](repeating: 0, count: min(limit, Int(status.st_size)))
    var filled = 0
    while filled < bytes.count {
        let count = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress?.advanced(by: filled), $0.count - filled) }
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { return nil }
        filled += count
    }
    return bytes
}

/// The run a weights file records: `.some(nil)` when it records none, `nil` when its header cannot be read (the
/// file's own load reports why). Only the preamble and header are read (`ModelFile.recordedTraining`).
func recordedRun(ofWeights path: String) -> String?? {
    ModelFile.recordedTraining { leadingBytes(of: path, limit: $0) }.map { $0?.run }
}

/// The run a curves file records in its `data-training-run` attribute: `.some(nil)` when it records none,
/// `nil` when there is no readable curves file.
func recordedRun(ofCurves path: String) -> String?? {
    guard let bytes = leadingBytes(of: path, limit: 4096) else { return nil }
    let text = String(decoding: bytes, as: UTF8.self)
    guard let start = text.range(of: TrainingCurves.runAttribute + "=\"") else { return .some(nil) }
    guard let end = text[start.upperBound...].firstIndex(of: "\"") else { return .some(nil) }
    return .some(String(text[start.upperBound..<end]))
}
