/**
 * The near-duplicate of the feedback-robustness measure (issue 17.3): as near to its original
 * as the index can tell, so that the pair is near-equally relevant.
 */
import { describe, expect, it } from 'vitest'
import { nearDuplicate } from '../../src/eval/robustness.js'
import { searchDocument } from '../../src/knowledge/search/document.js'

describe('nearDuplicate', () => {
  it('keeps a plain entry plain: task and content both the copied text, indexed once as body', () => {
    const original = { task: 'Caroline went to a support group.', content: 'Caroline went to a support group.' }
    const copy = nearDuplicate(original)
    expect(copy).toEqual({ task: 'Caroline went to a support group. (copy)', content: 'Caroline went to a support group. (copy)' })
    expect(searchDocument(copy.task, copy.content, {}).title).toEqual(searchDocument(original.task, original.content, {}).title)
  })

  it('keeps the task of an entry whose task is not its content', () => {
    expect(nearDuplicate({ task: '部署流程', content: '打 v* 标签触发流水线' })).toEqual({ task: '部署流程', content: '打 v* 标签触发流水线 (copy)' })
  })
})
