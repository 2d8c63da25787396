import { ProviderApiError } from '../../core/errors.js';
import { runLanguageModelContract } from '../contracts/language-model.contract.js';
import { ScriptedLanguageModel } from './scripted-language-model.js';

runLanguageModelContract('scripted model (test/fakes)', async () => {
  const model = new ScriptedLanguageModel();
  const failure = () => new ProviderApiError('scripted', 'The scripted model refused the request', false);
  return {
    model,
    answerText: (text) => void model.on({}, { text }, 1),
    answerToolCalls: (calls, text) => void model.on({}, { text, toolCalls: calls }, 1),
    answerSlowly: (text, delayMs) => void model.on({}, { text, wordDelayMs: delayMs }, 1),
    failNext: () => {
      model.on({}, { error: failure() }, 1);
      model.onExtract({}, { error: failure() }, 1);
    },
    answerJson: (value) => void model.onExtract({}, { value }, 1),
    close: async () => undefined,
  };
});
