import { checkBrowserSuites } from '../browser/run-suite';
import { checkAreas, runArea } from './run-area';

runArea('platform');
checkAreas();
checkBrowserSuites();
