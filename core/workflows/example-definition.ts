import type { WorkflowDefinition } from './workflow-definition.js';

/**
 * A realistic, valid workflow definition: an appointment-confirmation agent for a dental clinic.
 *
 * start → confirm ⇄ reschedule → endCall (confirmed / rescheduled), confirm → endCall (wrong person), plus a
 * globalNode whose prompt the agent nodes include. `confirm` ⇄ `reschedule` is a cycle, which is allowed.
 * `{{first_name}}` and `{{appointment_time}}` come from the contact's row (the run's initial context).
 *
 * Used by docs/api.md and tests. Shared by reference: clone it (`structuredClone`) before changing it.
 */
export const exampleWorkflowDefinition: WorkflowDefinition = {
  nodes: [
    {
      id: 'start',
      type: 'startCall',
      position: { x: 0, y: 0 },
      data: {
        name: 'Greeting',
        greeting: 'Hi, this is Ava from Brightsmile Dental. Am I speaking with {{first_name}}?',
        prompt:
          'Greet the caller and make sure you are speaking with {{first_name}}. Once they confirm who they are, ' +
          'say you are calling about their appointment.',
        allow_interrupt: true,
        add_global_prompt: true,
      },
    },
    {
      id: 'confirm',
      type: 'agentNode',
      position: { x: 0, y: 160 },
      data: {
        name: 'Confirm appointment',
        prompt:
          'Remind {{first_name}} of the cleaning appointment on {{appointment_time}} and ask whether they can ' +
          'still make it.',
        allow_interrupt: true,
        add_global_prompt: true,
        extraction_enabled: true,
        extraction_variables: [
          { name: 'will_attend', type: 'boolean', prompt: 'Whether the caller says they will come at the booked time.' },
        ],
      },
    },
    {
      id: 'reschedule',
      type: 'agentNode',
      position: { x: 320, y: 160 },
      data: {
        name: 'Find a new time',
        prompt:
          'Offer the next free slots (weekdays 8am to 5pm) until the caller picks one. Read the chosen day and ' +
          'time back to them.',
        allow_interrupt: true,
        add_global_prompt: true,
        extraction_enabled: true,
        extraction_variables: [
          { name: 'new_time', type: 'string', prompt: 'The day and time the caller agrees to, as they said it.' },
          { name: 'slots_offered', type: 'number', prompt: 'How many slots you offered before one was accepted.' },
        ],
      },
    },
    {
      id: 'end_confirmed',
      type: 'endCall',
      position: { x: 0, y: 320 },
      data: {
        name: 'Confirmed',
        prompt: 'Thank the caller, remind them to arrive ten minutes early, and say goodbye.',
        disposition: 'appointment_confirmed',
      },
    },
    {
      id: 'end_rescheduled',
      type: 'endCall',
      position: { x: 320, y: 320 },
      data: {
        name: 'Rescheduled',
        prompt: 'Confirm the new time once more, say a text confirmation will follow, and say goodbye.',
        disposition: 'appointment_rescheduled',
      },
    },
    {
      id: 'end_wrong_person',
      type: 'endCall',
      position: { x: -320, y: 320 },
      data: {
        name: 'Wrong person',
        prompt: 'Apologize for the mix-up and end the call politely without sharing any appointment details.',
        disposition: 'wrong_number',
      },
    },
    {
      id: 'global',
      type: 'globalNode',
      position: { x: 640, y: 0 },
      data: {
        name: 'Clinic rules',
        prompt:
          'You are Ava, a friendly scheduling assistant for Brightsmile Dental. Keep answers short. Never give ' +
          'medical advice. If asked, the clinic is at 12 Harbor Street and opens weekdays 8am to 5pm.',
      },
    },
  ],
  edges: [
    {
      id: 'e_start_confirm',
      source: 'start',
      target: 'confirm',
      data: { label: 'Identity confirmed', condition: 'The caller confirms they are {{first_name}}.' },
    },
    {
      id: 'e_start_wrong',
      source: 'start',
      target: 'end_wrong_person',
      data: { label: 'Wrong person', condition: 'The caller says they are not {{first_name}} or do not know them.' },
    },
    {
      id: 'e_confirm_end',
      source: 'confirm',
      target: 'end_confirmed',
      data: { label: 'Will attend', condition: 'The caller confirms they will come at the booked time.' },
    },
    {
      id: 'e_confirm_reschedule',
      source: 'confirm',
      target: 'reschedule',
      data: { label: 'Needs another time', condition: 'The caller cannot make the booked time or asks to move it.' },
    },
    {
      id: 'e_reschedule_confirm',
      source: 'reschedule',
      target: 'confirm',
      data: {
        label: 'Keeps original time',
        condition: 'The caller changes their mind and wants to keep the original appointment.',
      },
    },
    {
      id: 'e_reschedule_end',
      source: 'reschedule',
      target: 'end_rescheduled',
      data: { label: 'New time agreed', condition: 'The caller accepts one of the offered slots.' },
    },
  ],
};
