import DataFiles
import Foundation
import WeightsFormat

/// What a `$CLASSIFY_WEIGHTS` folder that holds none of a task's shipped file names holds for the task
/// (`WeightsLocator.folderModel`).
package enum FolderModel: Equatable, Sendable {
    /// Its one model of the task: the variants to load (`NAME` for `NAME.weights`, `PREFIX.VARIANT` for
    /// `PREFIX.VARIANT.weights`), int8 first, then f32, then the rest by name.
    case found([String])
    /// Several models of the task: which one is meant cannot be told.
    case several(DataError)
    /// No model of the task among its weights files, or more weights files than are looked through: the error
    /// says what was found.
    case notFound(DataError)
}

extension WeightsLocator {
    /// The most weights files a `$CLASSIFY_WEIGHTS` folder without a task's shipped names is searched among for its
    /// one model of the task: each one's header is read (not the file), on every run.
    package static let maximumFolderCandidates = 256

    /// For a `$CLASSIFY_WEIGHTS` folder holding `names` (its entries) but no `model.*.weights`: its one model whose
    /// header records `task`'s preprocessing, whatever its name (any `*.weights` file that is not hidden). Files are
    /// grouped in models by name, `PREFIX.VARIANT.weights` by its prefix, any other `NAME.weights` a model of its
    /// own; only each file's preamble and header are read (`ModelFile.recordedPreprocessingKind`), and only when
    /// the folder holds at most `maximumFolderCandidates` weights files. `nil` when the folder holds `model`'s own
    /// files, or no weights files at all: the lookup by name applies.
    package static func folderModel(in folder: String, names: [String], task: RecognitionTask) -> FolderModel? {
        let model = task.modelName
        let files = names.filter { $0.hasSuffix(".weights") && !$0.hasPrefix(".") }.sorted()
        guard !files.isEmpty, !files.contains(where: { $0.hasPrefix(model + ".") }) else { return nil }
        let variable = "$\(environmentVariable)"
        guard files.count <= maximumFolderCandidates else {
            return .notFound(
                DataError(
                    file: folder,
                    message:
                        "holds \(grouped(files.count)) weights files and no \(model).*.weights; \(variable) serves its one \(task.rawValue) model "
                        + "from a folder of at most \(maximumFolderCandidates) weights files (each one's header is read on every run): "
                        + "keep fewer files there, or name one with --weights"))
        }
        var models: [String: [String]] = [:]
        // What each file is, by the words the error counts it in: "shape model", "unreadable", ….
        var found: [String: Int] = [:]
        for file in files {
            let stem = String(file.dropLast(".weights".count))
            let prefix = stem.lastIndex(of: ".").map { String(stem[..<$0]) } ?? stem
            let path = URL(fileURLWithPath: folder).appendingPathComponent(file).path
            switch ModelFile.recordedPreprocessingKind(leadingBytes: { leadingBytes(of: path, limit: $0) }) {
            case .some(.some(let known)):
                found["\(known.task.rawValue) model", default: 0] += 1
                if known.task == task { models[prefix, default: []].append(stem) }
            case .some(.none): found["of a kind this build does not know", default: 0] += 1
            case .none: found["unreadable", default: 0] += 1
            }
        }
        guard let (prefix, variants) = models.min(by: { $0.key < $1.key }) else {
            let counts = found.sorted { $0.key < $1.key }.map { kind, count in
                "\(grouped(count)) \(kind)\(count > 1 && kind.hasSuffix(" model") ? "s" : "")"
            }
            return .notFound(
                DataError(
                    file: folder,
                    message: "holds \(grouped(files.count)) weights file\(files.count == 1 ? "" : "s") (\(counts.joined(separator: ", "))), "
                        + "none a \(task.rawValue) model, and no \(model).*.weights: put a \(task.rawValue) model there (any name ending .weights), "
                        + "or name one with --weights"))
        }
        guard models.count == 1 else {
            return .several(
                DataError(
                    file: folder,
                    message:
                        "holds no \(model).*.weights and \(models.count) \(task.rawValue) models (\(models.keys.sorted().joined(separator: ", "))); "
                        + "\(variable) serves one: name a file with --weights, or keep one model of the task in the folder"))
        }
        let order = { (variant: String) -> (Int, String) in
            (variant == prefix + ".int8" ? 0 : variant == prefix + ".f32" ? 1 : 2, variant)
        }
        return .found(variants.sorted { order($0) < order($1) })
    }

    /// `count` with a comma between each group of three digits: 10,001.
    static func grouped(_ count: Int) -> String {
        let digits = String(count)
        return digits.enumerated().map { ($0.offset > 0 && (digits.count - $0.offset) % 3 == 0 ? "," : "") + String($0.element) }.joined()
    }
}
