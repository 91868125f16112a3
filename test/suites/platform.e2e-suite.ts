import { checkAreas, runArea } from './run-area';

runArea('platform');
checkAreas();
