/**
 * The v0.7 layers as resolver candidates: a pack's ontology and answer
 * subgraphs for the task (subgraph.ts), each one piece ranked with the
 * runtime views. They are built per task and never stored in the index.
 */
import type { IndexedSection, PackIndex } from '../pack-index/pack-index.js'
import { answersPiece, ontologyPieces, type LayerPiece } from './subgraph.js'
import type { TaskConcept } from './terms.js'
import type { Candidate } from './types.js'

/** The section of a layer piece: a negative id (never an index id), its anchors, warnings and file hash attached. */
function layerSection(piece: LayerPiece, id: number, title?: string): IndexedSection {
  const heading = title ?? (piece.layer === 'ontology' ? 'Ontology subgraph' : 'Answer records')
  return {
    id,
    path: piece.path,
    kind: piece.layer,
    heading,
    headingPath: [heading],
    line: 1,
    part: 0,
    order: 0,
    text: piece.text,
    length: 0,
    layer: { anchors: piece.anchors, warnings: piece.warnings, fileHash: piece.fileHash },
  }
}

/**
 * The layer candidates of one pack for a task: its answer records and its
 * ontology subgraph when they concern the task (group 1, with the runtime
 * views), and the ontology's relations, coverage and gates (group 3). The
 * concepts are the task's decisive ones (those the pack's own name does not name).
 * @example
 * candidates.push(...layerCandidates(0, index, taskConcepts(queryTerms(task))))
 */
export function layerCandidates(packIndex: number, index: PackIndex, concepts: readonly TaskConcept[]): Candidate[] {
  const graph = index.layers
  if (!graph) return []
  const [facts, context] = ontologyPieces(graph, concepts)
  const answers = answersPiece(graph, concepts)
  // Answers and ontology facts rank with the runtime views; relations, coverage and gates with the fallback.
  const ranked = [answers && { piece: answers, group: 1 }, facts && { piece: facts, group: 1 }, context && { piece: context, group: 3 }]
  return ranked
    .filter((x): x is { piece: LayerPiece; group: number } => x !== undefined)
    .map(({ piece, group }, i) => ({
      packIndex,
      section: layerSection(piece, -1 - i, group === 3 ? 'Ontology context' : undefined),
      score: piece.coverage,
      norm: 1,
      group,
      reason: piece.layer,
      coverage: piece.coverage,
      rank: 0,
    }))
}

/**
 * Warnings of the layer pieces among a pack's candidates whose file is selected.
 * @example
 * layerWarnings(plan.candidates, ['ontology/ontology.json'])
 */
export function layerWarnings(candidates: readonly Candidate[], files: readonly string[]): LayerPiece['warnings'] {
  return candidates.flatMap((c) => (c.section.layer && files.includes(c.section.path) ? c.section.layer.warnings : []))
}
