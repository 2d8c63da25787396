import type { WorkflowRepository } from '../../core/ports/workflow.repository.port.js';
import { exampleWorkflowDefinition } from '../../core/workflows/example-definition.js';

let created = 0;

/**
 * Stores the example workflow in `organizationId` and returns its id and current definition id: the parent
 * record the run and chat contract suites hang their records on. Each call gets a fresh workflow UUID.
 */
export async function createExampleWorkflow(
  workflows: WorkflowRepository,
  organizationId: number,
  now: Date,
): Promise<{ id: number; definitionId: number }> {
  const { workflow, current } = await workflows.create(organizationId, {
    name: 'Agent',
    workflowUuid: `00000000-0000-4000-8000-${String(++created).padStart(12, '0')}`,
    definition: structuredClone(exampleWorkflowDefinition),
    templateContextVariables: {},
    workflowConfigurations: {},
    now,
  });
  return { id: workflow.id, definitionId: current.id };
}
